import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  type ActionFiles,
  type ActionIo,
  SecretSinkError,
  type SecretSinkIo,
  type SinkCommand,
} from './action.js';

/** Group and other permission bits: a secrets file with any of them set is readable beyond its owner. */
const GROUP_OTHER_BITS = 0o077;

/**
 * The action ports on this machine's file system and processes. `environment` is what a sink
 * command inherits (the worker's, as src/config read it), with the sink's variables on top.
 */
export function nodeActionIo(environment: Readonly<Record<string, string | undefined>>): ActionIo {
  return { files: nodeFiles, secretSinks: nodeSecretSinks(environment) };
}

const nodeFiles: ActionFiles = {
  async exists(path) {
    return access(path).then(
      () => true,
      () => false,
    );
  },

  async writeAtomically(path, content) {
    await mkdir(dirname(path), { recursive: true });
    const temporary = join(dirname(path), `.${basename(path)}.${randomUUID().slice(0, 8)}.tmp`);
    try {
      const file = await open(temporary, 'wx');
      try {
        await file.writeFile(content, 'utf8');
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  },
};

function nodeSecretSinks(environment: Readonly<Record<string, string | undefined>>): SecretSinkIo {
  return {
    appendToFile: appendLine,
    checkFile,
    runCommand: (command) => runCommand(command, environment),
  };
}

async function checkFile(path: string): Promise<void> {
  try {
    const info = await stat(path);
    assertPrivateFile(path, info.mode, info.isFile());
  } catch (error) {
    if (error instanceof SecretSinkError) throw error;
    if (codeOf(error) !== 'ENOENT') throw fileError(path, error);
    try {
      if (!(await stat(dirname(path))).isDirectory()) throw new Error('not a directory');
    } catch (dirError) {
      throw fileError(path, dirError, `its directory ${dirname(path)} is not usable`);
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
  { argv, input, env, timeoutMs, signal }: SinkCommand,
  environment: Readonly<Record<string, string | undefined>>,
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
      env: { ...environment, ...env },
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
