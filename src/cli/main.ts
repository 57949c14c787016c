import { Command, CommanderError } from 'commander';
import { processEnvironment, type Settings, serviceRedis } from '../config/index.js';
import { describeRedis, isRedisUnreachable, redisRefusal } from '../store/index.js';
import { registerAdoptCommand } from './commands/adopt.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDriftCommands } from './commands/drift.js';
import { registerHistoryCommand } from './commands/history.js';
import { registerHoldCommands } from './commands/hold.js';
import { registerNextCommand } from './commands/next.js';
import { registerPlanCommand } from './commands/plan.js';
import { registerRunCommand } from './commands/run.js';
import { registerSchedulerCommand } from './commands/scheduler.js';
import { registerSchemaCommand } from './commands/schema.js';
import { registerSimCommand } from './commands/sim.js';
import { registerStartCommand } from './commands/start.js';
import { registerSuspendCommands } from './commands/suspend.js';
import { registerValidateCommand } from './commands/validate.js';
import { registerWorkerCommand } from './commands/worker.js';
import { EXIT, failureLine, RunFailedError, UsageError } from './exit.js';
import type { PolicyCommandDeps } from './policy-io.js';
import { redisSuspensions, settingsFrom } from './runtime.js';
import { version } from './version.js';

const PROGRAM_HELP = [
  '',
  'Output: tables for people on stdout; --json (validate, next, plan, run, history, suspend, unsuspend)',
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

/**
 * The whole CLI, on `settings` read once from the environment. Tests pass `deps` to fix the
 * clock, the registry and the output of the policy commands.
 */
export function buildProgram(
  deps: Partial<PolicyCommandDeps> = {},
  settings: Settings = settingsFrom(processEnvironment()),
): Command {
  const program = new Command('nightshift')
    .description('Scheduled automation for the Cloud Workspace Management API')
    .version(version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', PROGRAM_HELP)
    .exitOverride();
  registerValidateCommand(program, settings, deps);
  registerNextCommand(program, settings, { suspensions: () => redisSuspensions(settings), ...deps });
  registerSchemaCommand(program, settings, deps);
  registerStartCommand(program, settings);
  registerSchedulerCommand(program, settings);
  registerWorkerCommand(program, settings);
  registerRunCommand(program, settings);
  registerPlanCommand(program, settings);
  registerHistoryCommand(program, settings);
  registerSuspendCommands(program, settings);
  registerHoldCommands(program, settings);
  registerDriftCommands(program, settings);
  registerAdoptCommand(program, settings);
  registerSimCommand(program);
  registerDemoCommand(program, settings);
  return program;
}

/** Runs the CLI and resolves to the process exit code. */
/** Asking for help or the version reads no setting: a bad one must not hide how to fix it. */
const HELP_OR_VERSION = new Set(['-h', '--help', 'help', '-V', '--version']);

/**
 * The settings from the environment; when they are at fault and `argv` only asks for help or the
 * version, the defaults instead, so the help still prints.
 */
function settingsFor(argv: readonly string[]): Settings {
  try {
    return settingsFrom(processEnvironment());
  } catch (error) {
    if (error instanceof UsageError && argv.slice(2).some((arg) => HELP_OR_VERSION.has(arg)))
      return settingsFrom({});
    throw error;
  }
}

export async function main(argv: string[]): Promise<number> {
  let settings: Settings | undefined;
  try {
    settings = settingsFor(argv);
    await buildProgram({}, settings).parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
      if (error.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`nightshift: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof RunFailedError) {
      process.stderr.write(`nightshift: ${error.message}\n`);
      return EXIT.failed;
    }
    // a one-shot command (history, suspend, a queued run) gives up on Redis after a few tries
    const refused = redisRefusal(error);
    if (refused !== undefined || isRedisUnreachable(error)) {
      const redis = settings ? serviceRedis(settings) : undefined;
      const where = redis ? ` at ${describeRedis(redis)}` : '';
      const variable = {
        url: 'REDIS_URL',
        cluster: 'NIGHTSHIFT_REDIS_CLUSTER_NODES',
        sentinel: 'NIGHTSHIFT_REDIS_SENTINELS',
      };
      // a refusal (a wrong password) says why in Redis's words; never the error itself, which
      // carries the command it answered: AUTH's arguments are the password
      process.stderr.write(
        refused !== undefined
          ? `nightshift: Redis${where} refused: ${refused}\n`
          : `nightshift: Redis${where} did not answer: is it running, and is ${variable[redis?.kind ?? 'url']} right?\n`,
      );
      return EXIT.failed;
    }
    // the API, or anything else nightshift names, failed the command: one line, no stack
    const line = failureLine(
      argv.slice(2).find((arg) => !arg.startsWith('-')),
      error,
    );
    if (line === undefined) throw error;
    process.stderr.write(line);
    return EXIT.failed;
  }
}
