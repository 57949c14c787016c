import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { running } from '../../helpers/processes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * A process that keeps libuv's thread pool busy (so a log write in the background waits behind
 * the work), logs through the CLI's JSON logger on stdout, then runs `then`.
 */
function logger(then: string): ChildProcess {
  const script = `
    const { pbkdf2 } = await import('node:crypto');
    const { cliLogger, logsWritten } = await import(${JSON.stringify(`${ROOT}src/cli/logger.ts`)});
    const { loadSettings } = await import(${JSON.stringify(`${ROOT}src/config/settings.ts`)});
    const log = cliLogger(loadSettings({ NIGHTSHIFT_LOG_FORMAT: 'json' }), 'stdout', { role: 'test' });
    for (let n = 0; n < 8; n++) pbkdf2('secret', 'salt', 200000, 64, 'sha512', () => {});
    for (let n = 1; n <= 3; n++) log.info({ n }, 'line');
    ${then}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.set(child, true);
  return child;
}

function stop(child: ChildProcess): void {
  running.delete(child);
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // gone already
  }
}

/** Resolves with all the process wrote on stdout, once it has exited. */
function readAll(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    child.on('exit', () => resolve(text));
  });
}

const lines = (text: string) => text.split('\n').filter((line) => line.includes('"msg":"line"'));

describe('a service’s JSON log lines, written in the background', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child) stop(child);
  });

  it('are all written, in order, when a service waits for them before it exits, the thread pool busy', async () => {
    child = logger('await logsWritten(20_000); process.exit(0);');
    const out = await readAll(child);
    expect(lines(out).map((line) => JSON.parse(line).n)).toEqual([1, 2, 3]);
  }, 30_000);
});
