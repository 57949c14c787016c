import { CommanderError } from 'commander';
import { processEnvironment, type Settings, serviceRedis } from '../config/index.js';
import { programFor } from './command-modules.js';
import { EXIT, failureLine, RunFailedError, settingsFrom, UsageError } from './exit.js';

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

/** Runs the CLI and resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let settings: Settings | undefined;
  try {
    settings = settingsFor(argv);
    await (await programFor(argv, settings)).parseAsync(argv);
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
    // a one-shot command (history, suspend, a queued run) gives up on Redis after a few tries;
    // the command that met Redis has loaded the store already
    const { describeRedis, isRedisUnreachable, redisRefusal } = await import('../store/index.js');
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
