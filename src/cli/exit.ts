import type { Command } from 'commander';
import { ConfigError, type Environment, loadSettings, type Settings } from '../config/index.js';
import { isNightshiftError, NightshiftError } from '../errors/index.js';
import { formatProblem, type PolicyProblem } from '../policy/index.js';

/**
 * Exit codes every command follows: 0 success, 1 the job or run failed, 2 bad usage or invalid
 * policy, 3 the run succeeded but reported findings (so an audit can gate a CI pipeline).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, findings: 3 } as const;

/**
 * What kind of usage error, for scripts reading `--json` output: `invalid-policy` (with
 * `problems`), `unknown-job` (with a `suggestion` when one is close), `no-policy` (no policy to
 * check a name against), `usage` (anything else).
 */
export type UsageErrorKind = 'usage' | 'invalid-policy' | 'unknown-job' | 'no-policy';

export interface UsageErrorDetails {
  readonly kind?: UsageErrorKind;
  /** Every problem of an invalid policy, each printed as `file:line:col: message`. */
  readonly problems?: readonly PolicyProblem[];
  /** The name the input was most likely meant to be. */
  readonly suggestion?: string;
}

/** What a command given `--json` prints on stdout for a usage error. */
export interface UsageErrorJson {
  readonly error: UsageErrorKind;
  readonly message: string;
  readonly problems?: readonly PolicyProblem[];
  readonly suggestion?: string;
}

/** Thrown by a command for bad usage; printed without a stack and exits 2. */
export class UsageError extends NightshiftError {
  override name = 'UsageError';
  readonly code = 'NS_USAGE';
  /** The `error` of the `--json` output; every kind exits 2. */
  readonly kind: UsageErrorKind;
  readonly problems: readonly PolicyProblem[] | undefined;
  readonly suggestion: string | undefined;

  constructor(message: string, details: UsageErrorDetails = {}) {
    super(message);
    this.kind = details.kind ?? 'usage';
    this.problems = details.problems;
    this.suggestion = details.suggestion;
  }

  toJSON(): UsageErrorJson {
    return {
      error: this.kind,
      message: this.message,
      ...(this.problems
        ? { problems: this.problems.map(({ file, line, col, message }) => ({ file, line, col, message })) }
        : {}),
      ...(this.suggestion === undefined ? {} : { suggestion: this.suggestion }),
    };
  }
}

/** What a person reads for a usage error: every problem as `file:line:col: message`, else the message. */
export function formatUsageError(error: UsageError): string {
  if (error.problems && error.problems.length > 0) return `${error.problems.map(formatProblem).join('\n')}\n`;
  return `nightshift: ${error.message}\n`;
}

/**
 * Wraps a command's action so a usage error is reported where it is raised, exit 2: with `--json`
 * as a JSON object on stdout (which holds nothing else) and for people on stderr as well, so a
 * script's `jq` gets an object and whoever watches the terminal still reads why.
 */
export function reportingUsageErrors<Args extends unknown[]>(
  action: (...args: Args) => Promise<void>,
): (...args: Args) => Promise<void> {
  return async (...args) => {
    try {
      await action(...args);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      const command = args.at(-1) as Command;
      if (command.opts().json === true) process.stdout.write(`${JSON.stringify(error.toJSON(), null, 2)}\n`);
      process.stderr.write(formatUsageError(error));
      process.exitCode = EXIT.usage;
    }
  };
}

/** Thrown by a command when its job or run failed with nothing better to print; exits 1. */
export class RunFailedError extends NightshiftError {
  override name = 'RunFailedError';
  readonly code = 'NS_RUN_FAILED';

  constructor(runId: string, reason: string) {
    super(`run ${runId} failed: ${reason}`);
  }
}

/**
 * What to check when an API call failed this way: the address when nothing answered, the key when
 * the API refused it. Read from the error's stable code and type, so this module (which every
 * command loads) does not load the API client.
 */
function apiHint(error: NightshiftError): string | undefined {
  if (!isNightshiftError(error, 'NS_API_ERROR')) return undefined;
  const { type } = error as NightshiftError & { type?: string };
  if (type === 'Network' || type === 'Timeout') return 'is NIGHTSHIFT_API_URL right, and the API up?';
  if (type === 'Unauthorized' || type === 'Forbidden')
    return 'is NIGHTSHIFT_API_KEY (or NIGHTSHIFT_API_KEY_FILE) right?';
  return undefined;
}

/**
 * The one line a command that failed with a nightshift error prints, naming the command and the
 * cause (an API call names its operation and what came back), with what to check where that is
 * clear. Undefined for any other error: that is a bug, and its stack says more.
 */
export function failureLine(command: string | undefined, error: unknown): string | undefined {
  if (!isNightshiftError(error)) return undefined;
  const hint = apiHint(error);
  return `nightshift: ${command ? `${command}: ` : ''}${error.message}${hint ? ` (${hint})` : ''}\n`;
}

/** What `read` returns, a setting it finds at fault being bad usage (exit 2). */
export function asUsage<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/** The settings in `env`; a variable at fault is bad usage (exit 2). */
export function settingsFrom(env: Environment): Settings {
  return asUsage(() => loadSettings(env));
}
