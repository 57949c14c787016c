import { spawn } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import { z } from 'zod';
import { ApiError } from '../../src/api/index.js';
import { DurationSchema, type PlanContext, type SelectedWorkspace } from '../../src/engine/index.js';
import { rewordApiError } from './api-errors.js';

const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
const MAX_COMMAND_TIMEOUT_MS = 10 * 60_000;
/** Group and other permission bits: a secrets file with any of them set is readable beyond its owner. */
const GROUP_OTHER_BITS = 0o077;

const FileSinkSchema = z.strictObject({
  file: z
    .string()
    .refine(isAbsolute, 'a secret sink file must be an absolute path (it is written on the worker)')
    .meta({
      description:
        'Absolute path of a JSON-lines file on the worker that runs the job; created with mode 0600, refused if group or others have any permission on it.',
    }),
});

const CommandSinkSchema = z.strictObject({
  command: z.array(z.string().min(1)).min(1, 'a secret sink command needs at least the program to run').meta({
    description:
      'Program and arguments, run without a shell; the secret arrives as JSON on stdin, its identity also in NIGHTSHIFT_SECRET_* variables. A non-zero exit fails the target.',
  }),
  timeout: DurationSchema.refine(
    (ms) => ms <= MAX_COMMAND_TIMEOUT_MS,
    'a secret sink command timeout must be at most 10m',
  )
    .optional()
    .meta({
      description: 'How long the command may take before it is killed and counted as failed.',
      default: '30s',
    }),
});

/** Where a password the job sets is delivered before the API call that sets it. */
export const SecretSinkSchema = z.union([FileSinkSchema, CommandSinkSchema]).meta({
  description: 'Where passwords are delivered: { file: /abs/path.jsonl } or { command: [program, args...] }.',
});
export type SecretSink = z.output<typeof SecretSinkSchema>;

/** The in-database user a password is for, as a policy names it: 1 to 64 characters, as the API takes. */
export const DbUsernameSchema = z.string().min(1).max(64);

/** Characters in a generated password unless a job says otherwise. */
export const DEFAULT_PASSWORD_LENGTH = 32;

/** What a delivered secret belongs to; none of it is secret, so it may appear in logs and errors. */
export interface SecretIdentity {
  job: string;
  runId: string;
  workgroupId: string;
  workspaceId: string;
  username: string;
}

/** The identity of the password a run's step sets for `username` in workspace `ws`. */
export function secretIdentity(ctx: PlanContext, ws: SelectedWorkspace, username: string): SecretIdentity {
  return {
    job: ctx.job.name,
    runId: ctx.runId,
    workgroupId: ws.workgroupId,
    workspaceId: ws.workspaceId,
    username,
  };
}

/**
 * `pending` carries the password and is written before the API call that sets it; `current`
 * (same `secretId`, no password) after that call succeeded.
 */
export type SecretState = { state: 'pending'; password: string } | { state: 'current' };

/** A sink that could not take a secret. The message names the sink, never the secret. */
export class SecretSinkError extends Error {
  override name = 'SecretSinkError';
}

/** How errors and summaries name a sink: its path, or the program it runs. */
export function describeSink(sink: SecretSink): string {
  return 'file' in sink ? sink.file : (sink.command[0] ?? '');
}

/** A fresh id tying a `current` record to the `pending` one that carried its password. */
export function newSecretId(): string {
  return randomUUID();
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
/**
 * Letters and digits only: the spec states no password rules, and these are the characters every
 * password policy accepts and no connection string, shell or URL needs escaped. At 62 symbols a
 * 16-character password still carries 95 bits.
 */
const ALPHABET = LOWER + UPPER + DIGITS;

/**
 * A password of `length` characters drawn uniformly with node:crypto, holding at least one lower
 * case letter, one upper case letter and one digit (redrawn until it does, which keeps the draw
 * uniform over the passwords that qualify).
 */
export function generatePassword(length: number): string {
  for (;;) {
    let password = '';
    for (let i = 0; i < length; i++) password += ALPHABET[randomInt(ALPHABET.length)];
    if ([LOWER, UPPER, DIGITS].every((set) => [...password].some((char) => set.includes(char)))) {
      return password;
    }
  }
}

/**
 * The error a call that carried `secret` failed with, with every quote of the secret replaced.
 * The spec does not promise that a server never echoes a submitted field in its answer, and an
 * ApiError's message and details reach logs and the run summary.
 */
export function withoutSecret(error: unknown, secret: string): unknown {
  if (!(error instanceof ApiError) || !JSON.stringify(error.toJSON()).includes(secret)) return error;
  const scrub = (text: string) => text.split(secret).join('[redacted]');
  const message = scrub(error.message);
  return rewordApiError(error, {
    retryAfterMs: error.retryAfterMs,
    details: error.details.map((detail) => ({ ...detail, Reason: detail.Reason && scrub(detail.Reason) })),
    // The message is "<call> → <outcome>: <reason>"; the constructor puts the prefix back.
    reason: message.slice(message.indexOf(': ', message.indexOf('→')) + 2),
  });
}

/**
 * Delivers one record to the sink and resolves once the sink holds it: the file line is synced
 * to disk, the command exited 0. Anything else rejects with a {@link SecretSinkError}.
 */
export async function deliverSecret(
  sink: SecretSink,
  identity: SecretIdentity,
  secretId: string,
  secret: SecretState,
  signal: AbortSignal,
): Promise<void> {
  const record = {
    time: new Date().toISOString(),
    ...identity,
    secretId,
    state: secret.state,
    ...(secret.state === 'pending' ? { password: secret.password } : {}),
  };
  if ('file' in sink) await appendLine(sink.file, `${JSON.stringify(record)}\n`);
  else
    await runCommand(
      sink.command,
      sink.timeout ?? DEFAULT_COMMAND_TIMEOUT_MS,
      JSON.stringify(record),
      {
        NIGHTSHIFT_SECRET_ID: secretId,
        NIGHTSHIFT_SECRET_STATE: secret.state,
        NIGHTSHIFT_SECRET_JOB: identity.job,
        NIGHTSHIFT_SECRET_RUN_ID: identity.runId,
        NIGHTSHIFT_SECRET_WORKGROUP_ID: identity.workgroupId,
        NIGHTSHIFT_SECRET_WORKSPACE_ID: identity.workspaceId,
        NIGHTSHIFT_SECRET_USERNAME: identity.username,
      },
      signal,
    );
}

/**
 * Records that the password of a `pending` record is now in effect. Its failure leaves that
 * password set but still marked pending, which the error says so an operator can settle it.
 */
export async function markCurrent(
  sink: SecretSink,
  identity: SecretIdentity,
  secretId: string,
  signal: AbortSignal,
): Promise<void> {
  try {
    await deliverSecret(sink, identity, secretId, { state: 'current' }, signal);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new SecretSinkError(
      `the password of "${identity.username}" was set, and is the one in pending record ${secretId}, but marking it current failed: ${why}`,
    );
  }
}

/**
 * Read-only look at a sink for a dry run: a file sink whose file is shared with group or others,
 * or whose directory is missing, rejects as a real delivery would. A command is not run.
 */
export async function checkSink(sink: SecretSink): Promise<void> {
  if (!('file' in sink)) return;
  try {
    const info = await stat(sink.file);
    assertPrivateFile(sink.file, info.mode, info.isFile());
  } catch (error) {
    if (error instanceof SecretSinkError) throw error;
    if (codeOf(error) !== 'ENOENT') throw fileError(sink.file, error);
    try {
      if (!(await stat(dirname(sink.file))).isDirectory()) throw new Error('not a directory');
    } catch (dirError) {
      throw fileError(sink.file, dirError, `its directory ${dirname(sink.file)} is not usable`);
    }
  }
}

async function appendLine(path: string, line: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
  } catch (error) {
    throw fileError(path, error);
  }
  try {
    // Checked on the open file, not the path, so a file swapped in between cannot slip through.
    const info = await handle.stat();
    assertPrivateFile(path, info.mode, info.isFile());
    await handle.appendFile(line);
    // The password must survive a crash right after the API call that sets it.
    await handle.sync();
  } catch (error) {
    throw error instanceof SecretSinkError ? error : fileError(path, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function assertPrivateFile(path: string, mode: number, isFile: boolean): void {
  if (!isFile) throw new SecretSinkError(`secret sink ${path}: refused: not a regular file`);
  if ((mode & GROUP_OTHER_BITS) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    throw new SecretSinkError(
      `secret sink ${path}: refused: the file has mode ${octal}, so group or others may read it; ` +
        `make it private (chmod 600 ${path}) or use a new file`,
    );
  }
}

function fileError(path: string, error: unknown, what?: string): SecretSinkError {
  const code = codeOf(error);
  return new SecretSinkError(`secret sink ${path}: ${what ?? 'cannot write'}${code ? ` (${code})` : ''}`);
}

function codeOf(error: unknown): string | undefined {
  return error && typeof error === 'object' && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/**
 * Runs the sink command without a shell. Its stdout and stderr are discarded, never logged: a
 * store-secret program may well echo what it was given.
 */
function runCommand(
  argv: readonly string[],
  timeoutMs: number,
  input: string,
  env: Record<string, string>,
  signal: AbortSignal,
): Promise<void> {
  const [program = '', ...args] = argv;
  const name = `secret sink command ${program}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    let timedOut = false;
    const finish = (error?: SecretSinkError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const child = spawn(program, args, {
      shell: false,
      stdio: ['pipe', 'ignore', 'ignore'],
      env: { ...process.env, ...env },
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    const onAbort = () => {
      child.kill('SIGKILL');
      finish(new SecretSinkError(`${name}: cancelled`));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) =>
      finish(new SecretSinkError(`${name}: could not start (${codeOf(error) ?? 'error'})`)),
    );
    // A command that exits without reading stdin closes the pipe; its exit code still decides.
    child.stdin.on('error', () => undefined);
    child.on('close', (code, killedBy) => {
      if (timedOut) finish(new SecretSinkError(`${name}: no exit within ${timeoutMs} ms; killed`));
      else if (code === 0) finish();
      else
        finish(
          new SecretSinkError(
            `${name}: ${code === null ? `killed by ${killedBy}` : `exited with code ${code}`}`,
          ),
        );
    });
    if (signal.aborted) onAbort();
    else child.stdin.end(input);
  });
}
