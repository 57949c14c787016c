import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { assertBuilt, startCli, useEngineHarness } from '../../helpers/engine.js';

const POLICY = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 2
`;

describe('nightshift run through the queue (child process, Redis, a worker, simulator)', () => {
  const harness = useEngineHarness(
    { workgroups: 4, workspacesPerWorkgroup: 5 },
    // slow pauses, two at a time: the run lasts long enough for the CLI to see it under way
    { faults: { latencyMs: 150, operations: ['pauseWorkspace'] } },
  );

  it('shows the progress the worker reports on the BullMQ job, on stderr, with pure JSON on stdout', async () => {
    assertBuilt();
    const engine = harness.engine('run-progress');
    engine.worker(harness.sim.url);
    const file = join(mkdtempSync(join(tmpdir(), 'nightshift-run-queued-')), 'policy.yaml');
    writeFileSync(file, POLICY);
    const cli = startCli(['run', file, 'nightly-pause', '--json'], {
      REDIS_URL: harness.server.url,
      NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
      NIGHTSHIFT_LOG_LEVEL: 'warn',
      NIGHTSHIFT_LOG_FORMAT: '',
    });
    let stdout = '';
    let stderr = '';
    cli.child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    cli.child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    expect(await cli.exited, cli.output()).toBe(0);
    expect((JSON.parse(stdout) as RunSummary).counts.succeeded).toBe(20);
    const counts = stderr
      .split('\n')
      .filter((line) => / targets done /.test(line))
      .map((line) => {
        expect(line).toMatch(/^\d+\/20 targets done {2}\d\d:\d\d$/);
        return Number(line.split('/')[0]);
      });
    // read from the job while the run was under way, then the summary's final count
    expect(
      counts.some((count) => count < 20),
      stderr,
    ).toBe(true);
    expect(counts.at(-1)).toBe(20);
  });
});
