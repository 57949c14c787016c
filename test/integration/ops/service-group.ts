import { type CliProcess, startCli } from '../../helpers/engine.js';

// the JSON log lines a service wrote so far
export { logLines } from '../../helpers/engine.js';

/** A policy with one job that never fires while a test runs: a service with it just idles. */
export const IDLE_POLICY = `version: 1
jobs:
  evening-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

/**
 * `nightshift <args>` as a shell or an orchestrator starts a service: leading a process group of
 * its own, so a signal or a kill reaches everything it started.
 */
export function startService(args: readonly string[], env: Record<string, string>): CliProcess {
  return startCli(args, env);
}

/**
 * Sends `signal` to the service's whole group and waits up to `withinMs` for the service to
 * exit: its exit code (or signal) and how long it took, or `still running`.
 */
export async function signalGroup(
  cli: CliProcess,
  signal: NodeJS.Signals,
  withinMs: number,
): Promise<{ exit: number | NodeJS.Signals | null | 'still running'; ms: number }> {
  const started = Date.now();
  if (cli.child.exitCode === null && cli.child.signalCode === null) sendToGroup(cli, signal);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((resolve) => {
    timer = setTimeout(() => resolve('still running'), withinMs);
  });
  const exit = await Promise.race([cli.exited, late]);
  clearTimeout(timer);
  return { exit, ms: Date.now() - started };
}

/** Kills whatever is left of the service's group (SIGKILL); for `finally` and `afterEach`. */
export function killGroup(cli: CliProcess | undefined): void {
  if (cli) sendToGroup(cli, 'SIGKILL');
}

function sendToGroup(cli: CliProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-(cli.child.pid as number), signal);
  } catch (error) {
    // the group is gone already
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
