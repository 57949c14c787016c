import { randomInt, randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { ApiError } from '../../src/api/index.js';
import {
  DurationSchema,
  isNightshiftVariable,
  type PlanContext,
  SecretSinkError,
  type SecretSinkIo,
  type SelectedWorkspace,
} from '../../src/engine/index.js';
import { apiErrorReason, rewordApiError } from './api-errors.js';

const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
const MAX_COMMAND_TIMEOUT_MS = 10 * 60_000;

const FileSinkSchema = z.strictObject({
  file: z
    .string()
    .refine(isAbsolute, 'a secret sink file must be an absolute path (it is written on the worker)')
    .meta({
      description:
        'Absolute path of a JSON-lines file on the worker that runs the job; created with mode 0600. Refused: a symbolic link, a file of another user or that group or others have any permission on, a directory of another user (root aside) or that group or others may write to.',
    }),
});

const CommandSinkSchema = z.strictObject({
  command: z.array(z.string().min(1)).min(1, 'a secret sink command needs at least the program to run').meta({
    description:
      'Program and arguments, run without a shell; the secret arrives as JSON on stdin, its identity also in NIGHTSHIFT_SECRET_* variables. A non-zero exit fails the target. A worker with NIGHTSHIFT_SINK_COMMANDS runs only the programs it lists.',
  }),
  env: z
    .array(
      z
        .string()
        .regex(
          /^[A-Za-z_][A-Za-z0-9_]*$/,
          'a variable name: letters, digits and _, not starting with a digit',
        )
        .refine((name) => !isNightshiftVariable(name), {
          error: (issue) =>
            `${String(issue.input)} is one of nightshift's own settings (REDIS_URL, NIGHTSHIFT_*: its credentials among them), never passed to a sink command`,
        }),
    )
    .optional()
    .meta({
      description:
        "Names of the worker's environment variables the command also gets. It sees only these, PATH, HOME and its NIGHTSHIFT_SECRET_* variables: none of the worker's credentials.",
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
 * (same `secretId`, no password) after that call succeeded; `rejected` (same `secretId`, no
 * password, the API's error) after the API refused it, so that password was never set.
 */
export type SecretState =
  | { state: 'pending'; password: string }
  | { state: 'current' }
  | { state: 'rejected'; error: string };

/**
 * The program a job's secret sink runs, and where it is written within the job's `with:`, for a
 * refusal at its place in the file. Every action with a sink takes it as its `sink` parameter.
 */
export function sinkProgram(
  params: Readonly<Record<string, unknown>>,
): { path: (string | number)[]; program: string } | undefined {
  const sink = params.sink;
  if (typeof sink !== 'object' || sink === null || !('command' in sink) || !Array.isArray(sink.command))
    return undefined;
  const [program] = sink.command as unknown[];
  return typeof program === 'string' ? { path: ['sink', 'command', 0], program } : undefined;
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
  return rewordApiError(error, {
    retryAfterMs: error.retryAfterMs,
    details: error.details.map((detail) => ({ ...detail, Reason: detail.Reason && scrub(detail.Reason) })),
    // the constructor puts the "<call> → <outcome>: " prefix back
    reason: scrub(apiErrorReason(error)),
  });
}

/**
 * Delivers one record to the sink through the run's `io` and resolves once the sink holds it: the
 * file line is synced to disk, the command exited 0. Anything else rejects with a SecretSinkError.
 */
export async function deliverSecret(
  io: SecretSinkIo,
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
    ...(secret.state === 'rejected' ? { error: secret.error } : {}),
  };
  if ('file' in sink) await io.appendToFile(sink.file, `${JSON.stringify(record)}\n`);
  else
    await io.runCommand({
      argv: sink.command,
      input: JSON.stringify(record),
      env: {
        NIGHTSHIFT_SECRET_ID: secretId,
        NIGHTSHIFT_SECRET_STATE: secret.state,
        NIGHTSHIFT_SECRET_JOB: identity.job,
        NIGHTSHIFT_SECRET_RUN_ID: identity.runId,
        NIGHTSHIFT_SECRET_WORKGROUP_ID: identity.workgroupId,
        NIGHTSHIFT_SECRET_WORKSPACE_ID: identity.workspaceId,
        NIGHTSHIFT_SECRET_USERNAME: identity.username,
      },
      passEnv: sink.env ?? [],
      timeoutMs: sink.timeout ?? DEFAULT_COMMAND_TIMEOUT_MS,
      signal,
    });
}

/**
 * Records that the password of a `pending` record is now in effect. Its failure leaves that
 * password set but still marked pending, which the error says so an operator can settle it.
 */
export async function markCurrent(
  io: SecretSinkIo,
  sink: SecretSink,
  identity: SecretIdentity,
  secretId: string,
  signal: AbortSignal,
): Promise<void> {
  try {
    await deliverSecret(io, sink, identity, secretId, { state: 'current' }, signal);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new SecretSinkError(
      `the password of "${identity.username}" was set, and is the one in pending record ${secretId}, but marking it current failed: ${why}`,
    );
  }
}

/**
 * Whether the API answered a call with a refusal that means it was not applied: a client error
 * (404 no such user, 400 a password rule) or any answer whose type says the request itself is
 * wrong. Not a time-out, a network error or a 5xx: those may have been applied.
 */
function refusedByApi(error: unknown): error is ApiError {
  return error instanceof ApiError && !error.retryable && error.status !== undefined && error.status >= 400;
}

/**
 * What a step throws after the call that carried the password of `pending` record `secretId`
 * failed with `error` (already free of the secret). A refusal means that password was never set:
 * the record is closed as `rejected`, with the API's error, so no reader takes it for the one to
 * try. Any other failure may have been applied, so the record stays `pending`, as documented. A
 * sink that cannot take the closing record is named in the error, which stays the API's.
 */
export async function closeIfRejected(
  io: SecretSinkIo,
  sink: SecretSink,
  identity: SecretIdentity,
  secretId: string,
  error: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  if (!refusedByApi(error)) return error;
  try {
    await deliverSecret(io, sink, identity, secretId, { state: 'rejected', error: error.message }, signal);
    return error;
  } catch (sinkError) {
    const why = sinkError instanceof Error ? sinkError.message : String(sinkError);
    return rewordApiError(error, {
      details: error.details,
      reason: `${apiErrorReason(error)}; its pending record ${secretId} could not be closed as rejected: ${why}`,
    });
  }
}

/**
 * Read-only look at a sink for a dry run: a file sink whose file is shared with group or others,
 * or whose directory is missing, rejects as a real delivery would. A command is not run.
 */
export async function checkSink(io: Pick<SecretSinkIo, 'checkFile'>, sink: SecretSink): Promise<void> {
  if ('file' in sink) await io.checkFile(sink.file);
}
