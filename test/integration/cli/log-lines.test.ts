import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { running } from '../../helpers/processes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A process that logs through the CLI's JSON logger on stdout, then runs `then`. */
function logger(then: string): ChildProcess {
  const script = `
    const { cliLogger } = await import(${JSON.stringify(`${ROOT}src/cli/logger.ts`)});
    const { loadSettings } = await import(${JSON.stringify(`${ROOT}src/config/settings.ts`)});
    const log = cliLogger(loadSettings({ NIGHTSHIFT_LOG_FORMAT: 'json' }), 'stdout', { role: 'test' });
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

/** Resolves with the stdout read once `done` says it is enough (or the process ended). */
function readUntil(child: ChildProcess, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (done(text)) resolve(text);
    });
    child.on('exit', () => resolve(text));
  });
}

const lines = (text: string) => text.split('\n').filter((line) => line.includes('"msg":"line"'));

describe('a service’s JSON log lines, written a few kB at a time', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child) stop(child);
  });

  it('are all written when the process exits at once after logging them', async () => {
    child = logger('process.exit(0);');
    const out = await readUntil(child, () => false);
    expect(lines(out).map((line) => JSON.parse(line).n)).toEqual([1, 2, 3]);
  }, 30_000);

  it('reach stdout while the process runs on, though far fewer than a batch: the periodic flush writes them', async () => {
    child = logger('setTimeout(() => {}, 60_000);');
    const started = Date.now();
    const out = await Promise.race([
      readUntil(child, (text) => lines(text).length === 3),
      new Promise<string>((resolve) => setTimeout(() => resolve('(nothing within 15 s)'), 15_000)),
    ]);
    expect(lines(out)).toHaveLength(3);
    // still running: the lines came with the periodic flush, not at the exit
    expect(child.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);
});
