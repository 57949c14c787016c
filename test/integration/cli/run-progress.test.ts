import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_API_KEY, type SimulatorHandle } from '../../../src/sim/index.js';
import { assertBuilt, startCli, startFleetSim } from '../../helpers/engine.js';

const POLICY = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

/** `nightshift run … --inline` as a child process, with its stdout and stderr kept apart. */
async function runCli(args: string[], env: Record<string, string>) {
  const cli = startCli(args, env);
  let stdout = '';
  let stderr = '';
  cli.child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  cli.child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await cli.exited;
  return { code, stdout, stderr };
}

describe('nightshift run --inline off a terminal (child process, simulator)', () => {
  let sim: SimulatorHandle;
  let file: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    assertBuilt();
    sim = await startFleetSim({ workgroups: 4, workspacesPerWorkgroup: 5 });
    file = join(mkdtempSync(join(tmpdir(), 'nightshift-run-progress-')), 'policy.yaml');
    writeFileSync(file, POLICY);
    env = {
      NIGHTSHIFT_API_URL: sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_LOG_LEVEL: 'warn',
      NIGHTSHIFT_LOG_FORMAT: '',
      NIGHTSHIFT_POLL_INTERVAL_MS: '100',
    };
  });
  afterAll(() => sim?.close());

  it('--json: pure JSON on stdout, plain "done/total targets done" lines on stderr', async () => {
    const { code, stdout, stderr } = await runCli(['run', file, 'nightly-pause', '--inline', '--json'], env);
    expect(code, stderr).toBe(0);
    const summary = JSON.parse(stdout) as RunSummary;
    expect(summary.outcome).toBe('succeeded');
    expect(summary.counts.succeeded).toBe(20);

    expect(stderr).not.toContain('\r');
    expect(stderr).not.toContain('\u001b');
    const lines = stderr.split('\n').filter((line) => / targets done /.test(line));
    for (const line of lines) expect(line).toMatch(/^\d+\/20 targets done {2}\d\d:\d\d$/);
    const counts = lines.map((line) => Number(line.split('/')[0]));
    expect(counts.length).toBeGreaterThanOrEqual(2);
    expect(counts.length).toBeLessThanOrEqual(12);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(20);
  });

  it('--quiet: no progress at all, and the summary table on stdout', async () => {
    const { code, stdout, stderr } = await runCli(['run', file, 'nightly-pause', '--inline', '--quiet'], env);
    expect(code, stderr).toBe(0);
    expect(stderr).not.toContain('targets done');
    expect(stdout).toMatch(/^nightly-pause \(pause\) .*: succeeded\n {2}20 targets: 0 succeeded, 20 skipped/);
    expect(stdout).not.toContain('\u001b');
  });
});
