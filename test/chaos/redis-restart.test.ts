import { describe, expect, it } from 'vitest';
import { loadSettings, shutdownBudget } from '../../src/config/index.js';
import { DEFAULT_API_KEY } from '../../src/sim/index.js';
import { startLocalRedis } from '../../src/store/local-server.js';
import {
  assertBuilt,
  eventually,
  pauseRequests,
  startCli,
  useEngineHarness,
  workspacesNot,
} from '../helpers/engine.js';

const FLEET = { workgroups: 3, workspacesPerWorkgroup: 5 };
const TARGETS = FLEET.workgroups * FLEET.workspacesPerWorkgroup;

// 100 ms per pause, one at a time: the run takes about 1.5 s
const harness = useEngineHarness(FLEET, { faults: { latencyMs: 100, operations: ['pauseWorkspace'] } });

const POLICY = `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 1
`;

describe('Redis restarted mid-run', () => {
  it('the run carries on through the outage, completes, and is recorded once', async () => {
    const engine = harness.engine('redis-restart');
    const current = engine;
    engine.worker(harness.sim.url);
    const runId = await engine.enqueue(POLICY, 'fleet-pause');
    await eventually(
      'the run under way',
      async () => (await current.redis.hlen(current.keys.runTargets(runId))) >= 3,
      10_000,
    );
    const down = Date.now();
    await harness.server.restart();
    const up = Date.now();
    expect(await engine.history.get(runId)).toBeUndefined();
    const run = await engine.waitForRun(runId, 20_000);
    // the outage fell inside the run
    expect(Date.parse(run.startedAt as string)).toBeLessThan(down);
    expect(Date.parse(run.finishedAt as string)).toBeGreaterThan(up);

    expect(run).toMatchObject({
      outcome: 'succeeded',
      deliveries: 1,
      counts: { total: TARGETS, succeeded: TARGETS, failed: 0 },
    });
    await eventually('every workspace Stopped', () => workspacesNot(harness.sim, 'Stopped').length === 0);
    const calls = pauseRequests(harness.sim);
    expect(calls.size).toBe(TARGETS);
    for (const made of calls.values()) expect(made.map((call) => call.status)).toEqual([200]);
    expect(await engine.history.count({ job: 'fleet-pause' })).toBe(1);
    await eventually(
      'the BullMQ job completed',
      async () => (await (await current.queue.getJob(runId))?.getState()) === 'completed',
    );
    expect(await engine.redis.exists(engine.keys.runLock('fleet-pause'))).toBe(0);
  });
});

describe('Redis gone for good', () => {
  it('a worker told to stop while Redis is down still exits 0 after its grace period, with no stack traces', async () => {
    assertBuilt();
    const redis = await startLocalRedis({ appendOnly: false });
    const worker = startCli(['worker'], {
      REDIS_URL: redis.url,
      NIGHTSHIFT_API_URL: harness.sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_SHUTDOWN_GRACE_MS: '1000',
      NIGHTSHIFT_LOG_FORMAT: 'json',
    });
    try {
      await eventually('the worker started', () => worker.output().includes('worker started'), 10_000);
      await redis.kill();
      await eventually('the outage reported', () => worker.output().includes('Redis unreachable'), 10_000);
      const asked = Date.now();
      // exit code 0: its orderly shutdown ended it, not the backstop (which exits 1 at the budget's limit)
      expect(await worker.stop('SIGTERM')).toBe(0);
      const budget = shutdownBudget(loadSettings({ NIGHTSHIFT_SHUTDOWN_GRACE_MS: '1000' }), { ready: false });
      expect(Date.now() - asked).toBeLessThan(budget.limitMs);
      expect(worker.output()).not.toMatch(/\n\s+at /);
    } finally {
      await worker.stop('SIGKILL');
      await redis.stop();
    }
  }, 30_000);
});
