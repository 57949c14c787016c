import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seedState } from '../../../src/sim/index.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

const children = new Set<ChildProcessWithoutNullStreams>();
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

function runSim(args: string[]) {
  const child = spawn(process.execPath, ['bin/nightshift.js', 'sim', ...args], { cwd: root });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout });
  const stdout: string[] = [];
  const firstLine = new Promise<string>((resolve) => {
    lines.on('line', (line) => {
      stdout.push(line);
      resolve(line);
    });
    child.once('exit', () => resolve(''));
  });
  return { child, exited, firstLine, stdout, stderr: () => stderr };
}

describe('nightshift sim', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nightshift-sim-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints exactly one JSON line with its URL, serves, and exits 0 on SIGTERM', async () => {
    const run = runSim(['--port', '0', '--api-key', 'cli-key', '--fleet', '2x2', '--seed', '9']);
    const line = await run.firstLine;
    const { url } = JSON.parse(line) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/controller/v4/v2/workgroups`, { headers: { 'x-api-key': 'cli-key' } });
    expect(((await res.json()) as { Result: unknown[] }).Result).toHaveLength(2);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.stdout).toEqual([line]);
  });

  it('exits 0 on SIGINT as well', async () => {
    const run = runSim([]);
    await run.firstLine;
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });

  it('exits 2 with the specific message on stderr, and prints nothing on stdout, for a bad flag value', async () => {
    const run = runSim(['--fleet', '3by4']);
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toContain('nightshift: --fleet: fleet must look like WxS (e.g. 20x5), got "3by4"');
    expect(run.stdout).toEqual([]);
  });

  it('starts from a --state file, and serves no admin API with --no-admin', async () => {
    const path = join(dir, 'state.json');
    await writeFile(
      path,
      JSON.stringify(seedState({ seed: 3, fleet: { workgroups: 1, workspacesPerWorkgroup: 5 } })),
    );
    const run = runSim(['--state', path, '--no-admin', '--api-key', 'k']);
    const { url } = JSON.parse(await run.firstLine) as { url: string };
    const listed = await fetch(`${url}/controller/v4/v2/workgroups`, { headers: { 'x-api-key': 'k' } });
    expect(
      ((await listed.json()) as { Result: { workspaces: unknown[] }[] }).Result[0]?.workspaces,
    ).toHaveLength(5);
    expect((await fetch(`${url}/_sim/state`)).status).toBe(404);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });
});
