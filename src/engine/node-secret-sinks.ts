import { spawn } from 'node:child_process';
import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SecretSinkError, type SecretSinkIo, type SinkCommand } from './action.js';
import {
  isNightshiftVariable,
  SINK_BASE_ENVIRONMENT,
  type SinkCommandAllowlist,
  sinkProgramRefusal,
} from './sink-commands.js';

/** Group and other permission bits: a secrets file with any of them set is readable beyond its owner. */
const GROUP_OTHER_BITS = 0o077;
/** Group and other write bits: a directory with either lets others create, replace or remove its files. */
const GROUP_OTHER_WRITE = 0o022;
/**
 * How the sink file is opened: never through a symbolic link, and never waiting on a FIFO with no
 * reader (refused as not a regular file instead).
 */
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The worker's environment a sink command's variables come from, and the programs it may run. */
export interface SecretSinkHost {
  readonly environment: Readonly<Record<string, string | undefined>>;
  readonly sinkCommands: SinkCommandAllowlist;
}

/** The secret sinks on this machine's file system and processes. */
export function nodeSecretSinks(host: SecretSinkHost): SecretSinkIo {
  return {
    appendToFile: appendLine,
    checkFile,
    runCommand: (command) => runCommand(command, host),
  };
}

/** This process's user, or undefined where the platform has none. */
function ownUid(): number | undefined {
  return process.getuid?.();
}

/** What the checks read of a file or directory's status. */
export type OwnerAndMode = Pick<Stats, 'uid' | 'mode'>;

/**
 * Why the sink file's directory is refused, or undefined: it must be this user's (`uid`) or
 * root's, and neither group nor others may write to it (a sticky one neither: others may still
 * take the file's name first), or someone else could put another file in its place.
 */
export function directoryRefusal(
  path: string,
  info: OwnerAndMode,
  uid: number | undefined,
): string | undefined {
  const dir = dirname(path);
  if (uid !== undefined && info.uid !== uid && info.uid !== 0)
    return `secret sink ${path}: refused: its directory ${dir} belongs to uid ${info.uid}, not to this process's user (uid ${uid}) or root, so its owner could replace the file`;
  if ((info.mode & GROUP_OTHER_WRITE) !== 0)
    return `secret sink ${path}: refused: its directory ${dir} has mode ${octal(info.mode)}, so group or others may create, replace or remove files in it; use a directory only this user can write to (chmod go-w ${dir})`;
  return undefined;
}

/** Why the sink file itself is refused, or undefined: it must be this user's, and private to it. */
export function fileRefusal(path: string, info: OwnerAndMode, uid: number | undefined): string | undefined {
  if (uid !== undefined && info.uid !== uid)
    return `secret sink ${path}: refused: the file belongs to uid ${info.uid}, not to this process's user (uid ${uid})`;
  if ((info.mode & GROUP_OTHER_BITS) !== 0)
    return `secret sink ${path}: refused: the file has mode ${octal(info.mode)}, so group or others may read it; make it private (chmod 600 ${path}) or use a new file`;
  return undefined;
}

async function checkDirectory(path: string, missing: (error: unknown) => SecretSinkError): Promise<void> {
  let info: Stats;
  try {
    info = await stat(dirname(path));
  } catch (error) {
    throw missing(error);
  }
  if (!info.isDirectory()) throw missing(new Error('not a directory'));
  const refusal = directoryRefusal(path, info, ownUid());
  if (refusal) throw new SecretSinkError(refusal);
}

async function checkFile(path: string): Promise<void> {
  await checkDirectory(path, (error) =>
    fileError(path, error, `its directory ${dirname(path)} is not usable`),
  );
  let info: Stats;
  try {
    info = await lstat(path);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return;
    throw fileError(path, error);
  }
  assertPrivateFile(path, info);
}

async function appendLine(path: string, line: string): Promise<void> {
  await checkDirectory(path, (error) => fileError(path, error));
  const { handle, created } = await openForAppend(path);
  try {
    // Checked on the open file, not the path, so a file swapped in between cannot slip through.
    assertPrivateFile(path, await handle.stat());
    await handle.appendFile(line);
    // The password must survive a crash right after the API call that sets it.
    await handle.sync();
  } catch (error) {
    throw error instanceof SecretSinkError ? error : fileError(path, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
  // ... and so must the new file's name in its directory
  if (created) await syncDirectory(path);
}

/** Creates the file (0600) if it is not there, else opens it: never through a symbolic link. */
async function openForAppend(path: string): Promise<{ handle: FileHandle; created: boolean }> {
  try {
    return { handle: await open(path, APPEND | constants.O_CREAT | constants.O_EXCL, 0o600), created: true };
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw fileError(path, error);
  }
  try {
    return { handle: await open(path, APPEND), created: false };
  } catch (error) {
    if (codeOf(error) === 'ELOOP')
      throw new SecretSinkError(`secret sink ${path}: refused: it is a symbolic link; name the file itself`);
    if (codeOf(error) === 'ENXIO')
      throw new SecretSinkError(`secret sink ${path}: refused: not a regular file`);
    throw fileError(path, error);
  }
}

async function syncDirectory(path: string): Promise<void> {
  const dir = dirname(path);
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    await handle.sync();
  } catch (error) {
    throw fileError(path, error, `created, but its directory ${dir} could not be synced to disk`);
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

function assertPrivateFile(path: string, info: Stats): void {
  if (info.isSymbolicLink())
    throw new SecretSinkError(`secret sink ${path}: refused: it is a symbolic link; name the file itself`);
  if (!info.isFile()) throw new SecretSinkError(`secret sink ${path}: refused: not a regular file`);
  const refusal = fileRefusal(path, info, ownUid());
  if (refusal) throw new SecretSinkError(refusal);
}

function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
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
 * The variables a sink command runs with: its own, `PATH`, `HOME` and the names its `env:` lists,
 * from the worker's environment. Nothing else of the worker's: not its API key, tokens, policy key
 * or Redis URL (the sink's schema refuses those names; they are left out here too).
 */
function sinkEnvironment(
  { env, passEnv }: Pick<SinkCommand, 'env' | 'passEnv'>,
  environment: SecretSinkHost['environment'],
): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of [...SINK_BASE_ENVIRONMENT, ...passEnv]) {
    const value = environment[name];
    if (value !== undefined && !isNightshiftVariable(name)) passed[name] = value;
  }
  return { ...passed, ...env };
}

/**
 * Runs the sink command without a shell, if this machine allows its program. Its stdout and stderr
 * are discarded, never logged: a store-secret program may well echo what it was given.
 */
function runCommand(command: SinkCommand, { environment, sinkCommands }: SecretSinkHost): Promise<void> {
  const { argv, input, timeoutMs, signal } = command;
  const [program = '', ...args] = argv;
  const name = `secret sink command ${program}`;
  const refusal = sinkProgramRefusal(program, sinkCommands);
  if (refusal) return Promise.reject(new SecretSinkError(`${name}: refused: ${refusal}`));
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
    // in a process group of its own: a command killed for its timeout (or a shutdown) takes
    // whatever it started with it, rather than leaving it behind the worker
    const child = spawn(program, args, {
      shell: false,
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
      env: sinkEnvironment(command, environment),
    });
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const onAbort = () => {
      killGroup();
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
