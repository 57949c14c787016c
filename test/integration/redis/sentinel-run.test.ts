import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_API_KEY, type SimulatorHandle } from '../../../src/sim/index.js';
import {
  assertBuilt,
  type CliProcess,
  eventually,
  logLines,
  pauseRequests,
  startCli,
  startFleetSim,
} from '../../helpers/engine.js';
import { uniquePrefix } from '../../helpers/redis.js';
import { startRedisSentinels, useTopology } from '../../helpers/redis-topologies.js';

const FLEET = { workgroups: 10, workspacesPerWorkgroup: 10 };
const TARGETS = FLEET.workgroups * FLEET.workspacesPerWorkgroup;

const sentinels = useTopology(startRedisSentinels);
let sim: SimulatorHandle;
const started: CliProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  // 100 ms per pause, two at a time: the run lasts several seconds, longer than a failover
  sim = await startFleetSim(FLEET, { faults: { latencyMs: 100, operations: ['pauseWorkspace'] } });
});

afterAll(async () => {
  await Promise.all(started.map((cli) => cli.stop('SIGKILL')));
  await sim?.close();
});

const POLICY = `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 2
`;

const ERROR = 50;

describe('a queued run whose Redis primary fails over while `run` waits for it', () => {
  it('`run` rides out the failover and prints the summary; the worker reports the outage without an error or a stack', async () => {
    const env = {
      ...sentinels.current.environment,
      REDIS_URL: '',
      NIGHTSHIFT_REDIS_PREFIX: uniquePrefix('sentinel-run'),
      NIGHTSHIFT_API_URL: sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_LOG_FORMAT: 'json',
    };
    const worker = startCli(['worker'], { ...env, NIGHTSHIFT_LOG_LEVEL: 'info' });
    started.push(worker);
    const file = join(mkdtempSync(join(tmpdir(), 'nightshift-sentinel-run-')), 'policy.yaml');
    writeFileSync(file, POLICY);
    const run = startCli(['run', file, 'fleet-pause', '--json', '--quiet'], env);
    started.push(run);
    await eventually('the run a fifth of the way', () => pauseRequests(sim).size >= TARGETS / 5, 30_000);
    await sentinels.current.killPrimary();

    expect(await run.exited, run.output()).toBe(0);
    const summary = JSON.parse(run.stdout()) as RunSummary;
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { total: TARGETS, succeeded: TARGETS } });
    // it said it was waiting for Redis, once, and nothing else went wrong
    expect(run.stderr().match(/Redis did not answer/g) ?? [], run.stderr()).toHaveLength(1);

    const lines = logLines(worker);
    const errors = lines.filter((line) => line.level >= ERROR);
    expect(errors, JSON.stringify(errors)).toEqual([]);
    expect(lines.filter((line) => JSON.stringify(line).includes('All sentinels are unreachable'))).toEqual(
      [],
    );
    expect(lines.some((line) => line.msg === 'Redis unreachable; retrying')).toBe(true);
  });
});
