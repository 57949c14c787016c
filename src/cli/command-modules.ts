import { Command } from 'commander';
import type { Settings } from '../config/index.js';
import type { PolicyCommandDeps } from './policy-io.js';
import { version } from './version.js';

const PROGRAM_HELP = [
  '',
  'Output: tables for people on stdout; --json (validate, next, plan, run, history, cancel, suspend, unsuspend)',
  'prints JSON only on stdout. Logs and progress go to stderr. Colour only on a terminal, never with NO_COLOR.',
  'Exit codes: 0 ok, 1 a run or plan failed, 2 bad usage or invalid policy, 3 succeeded with findings.',
  'Environment: NIGHTSHIFT_API_URL, NIGHTSHIFT_API_KEY (or NIGHTSHIFT_API_KEY_FILE), REDIS_URL; see docs/configuration.md.',
  '',
  'Examples:',
  '  nightshift validate config/examples/cost-saving.yaml',
  '  nightshift next config/examples/cost-saving.yaml --count 3',
  '  nightshift plan config/policy.yaml',
  '  nightshift run config/policy.yaml nightly-pause --inline --dry-run',
  '  nightshift start config/policy.yaml',
  '  nightshift history --job nightly-pause --json',
  '  nightshift run --help',
].join('\n');

/** Registers one module's commands on the program. */
export type Registrar = (program: Command, settings: Settings, deps: Partial<PolicyCommandDeps>) => void;

/** The program with no command yet: its description, version, help and error handling. */
export function emptyProgram(): Command {
  return new Command('nightshift')
    .description('Scheduled automation for the Cloud Workspace Management API')
    .version(version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', PROGRAM_HELP)
    .exitOverride();
}

/**
 * Each command's module, by the name of the command: what `nightshift <command> …` loads, and
 * nothing else. A module's imports are what its commands need, so a scheduler does not load the
 * simulator, the demo or the commands that run jobs in-process. program.ts lists the same
 * registrars for the whole program (a unit test holds the two in step).
 */
export const COMMAND_MODULES: Readonly<Record<string, () => Promise<Registrar>>> = {
  validate: async () => (await import('./commands/validate.js')).registerValidateCommand,
  next: async () => (await import('./commands/next.js')).registerNextCommand,
  schema: async () => (await import('./commands/schema.js')).registerSchemaCommand,
  start: async () => (await import('./commands/start.js')).registerStartCommand,
  scheduler: async () => (await import('./commands/scheduler.js')).registerSchedulerCommand,
  worker: async () => (await import('./commands/worker.js')).registerWorkerCommand,
  run: async () => (await import('./commands/run.js')).registerRunCommand,
  plan: async () => (await import('./commands/plan.js')).registerPlanCommand,
  history: async () => (await import('./commands/history.js')).registerHistoryCommand,
  cancel: async () => (await import('./commands/cancel.js')).registerCancelCommand,
  approvals: async () => (await import('./commands/approve.js')).registerApprovalCommands,
  approve: async () => (await import('./commands/approve.js')).registerApprovalCommands,
  reject: async () => (await import('./commands/approve.js')).registerApprovalCommands,
  suspend: async () => (await import('./commands/suspend.js')).registerSuspendCommands,
  unsuspend: async () => (await import('./commands/suspend.js')).registerSuspendCommands,
  hold: async () => (await import('./commands/hold.js')).registerHoldCommands,
  holds: async () => (await import('./commands/hold.js')).registerHoldCommands,
  release: async () => (await import('./commands/hold.js')).registerHoldCommands,
  drift: async () => (await import('./commands/drift.js')).registerDriftCommands,
  savings: async () => (await import('./commands/drift.js')).registerDriftCommands,
  adopt: async () => (await import('./commands/adopt.js')).registerAdoptCommand,
  audit: async () => (await import('./commands/audit.js')).registerAuditCommand,
  'console-token': async () => (await import('./commands/console-token.js')).registerConsoleTokenCommand,
  sim: async () => (await import('./commands/sim.js')).registerSimCommand,
  demo: async () => (await import('./commands/demo.js')).registerDemoCommand,
};

/**
 * The program `argv` runs: when its first argument names a command, with that command's module
 * alone (its help and errors read as the whole program's); otherwise (help, the version, a
 * mistyped command) the whole program, which lists every command and suggests the closest.
 */
export async function programFor(argv: readonly string[], settings: Settings): Promise<Command> {
  const name = argv[2];
  const load = name === undefined ? undefined : COMMAND_MODULES[name];
  if (!load) return (await import('./program.js')).buildProgram({}, settings);
  const program = emptyProgram();
  (await load())(program, settings, {});
  return program;
}
