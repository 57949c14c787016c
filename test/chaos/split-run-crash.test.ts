import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/sim/index.js';
import { DEFAULT_API_KEY } from '../../src/sim/index.js';
import {
  assertBuilt,
  type CliProcess,
  Engine,
  eventually,
  pauseRequests,
  startCli,
  startFleetSim,
  workspacesNot,
} from '../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';

const FLEET = { workgroups: 10, workspacesPerWorkgroup: 5 };
const TARGETS = FLEET.workgroups * FLEET.workspacesPerWorkgroup;

let server: TestRedis;
let sim: SimulatorHandle;
let engine: Engine | undefined;
const workers: CliProcess[] = [];

beforeAll(async () => {
  assertBuilt('src/queue/run-worker.ts', 'src/queue/run-parts.ts', 'src/engine/split-run.ts');
  [server, sim] = await Promise.all([
    startTestRedis(),
    // 80 ms per pause, two at a time: a part of 10 takes about half a second
    startFleetSim(FLEET, { faults: { latencyMs: 80, operations: ['pauseWorkspace'] } }),
  ]);
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL')));
  await engine?.close();
  engine = undefined;
});

afterAll(async () => {
  await sim?.close();
  await server?.stop();
});

const POLICY = `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 2
`;

/** A worker that gives up a dead worker's runs fast and splits runs into parts of 10, one at a time. */
function startWorker(engine: Engine): CliProcess {
  const worker = startCli(['worker'], {
    REDIS_URL: server.url,
    NIGHTSHIFT_API_URL: sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
    NIGHTSHIFT_LOCK_MS: '1500',
    NIGHTSHIFT_POLL_INTERVAL_MS: '200',
    NIGHTSHIFT_SHUTDOWN_GRACE_MS: '2000',
    NIGHTSHIFT_LOG_LEVEL: 'info',
    NIGHTSHIFT_RUN_PART_SIZE: '10',
    NIGHTSHIFT_WORKER_CONCURRENCY: '1',
  });
  workers.push(worker);
  return worker;
}

describe('a worker killed while the parts of a split run go', () => {
  it('leaves what it had to the other workers: every workspace paused once and owned, one summary', async () => {
    engine = new Engine(server.url, 'split-run-crash');
    const current = engine;
    const runId = await engine.enqueue(POLICY, 'fleet-pause');
    const [first] = [startWorker(engine), startWorker(engine)] as [CliProcess, CliProcess];
    const checkpointed = () => current.redis.hlen(current.keys.runTargets(runId));
    await eventually('the run well under way', async () => (await checkpointed()) >= 12, 15_000);
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    expect(await checkpointed()).toBeLessThan(TARGETS);
    startWorker(engine);

    const run = await engine.waitForRun(runId, 30_000);
    expect(run).toMatchObject({ outcome: 'succeeded', counts: { total: TARGETS, failed: 0, skipped: 0 } });
    // what the killed worker paused (checkpointed or not) is owned: its intents were written first
    const owned = await engine.state.ledger.all();
    expect(owned.size).toBe(TARGETS);
    for (const record of owned.values())
      expect(record).toMatchObject({ owner: 'fleet-pause', runId, state: 'confirmed' });
    await eventually('every workspace Stopped', () => workspacesNot(sim, 'Stopped').length === 0);
    const calls = pauseRequests(sim);
    expect(calls.size).toBe(TARGETS);
    for (const made of calls.values()) expect(made.map((call) => call.status)).toEqual([200]);
    // the run listed the fleet, and again only if the killed worker held the run itself (not a part)
    expect(sim.requests().filter((entry) => entry.operation === 'listWorkgroups').length).toBeLessThanOrEqual(
      2,
    );
    expect(await engine.history.count({ job: 'fleet-pause' })).toBe(1);
    expect(
      await engine.redis.exists(
        engine.keys.runTargets(runId),
        engine.keys.runListing(runId),
        engine.keys.runLock('fleet-pause'),
      ),
    ).toBe(0);
  });
});
