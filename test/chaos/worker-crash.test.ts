import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { eventually, pauseRequests, workspacesNot } from '../helpers/engine.js';
import { POLICY, TARGETS, useCrashHarness } from './crash-harness.js';

const crash = useCrashHarness();

describe('a worker killed mid-run', () => {
  it('leaves its run to another worker, which finishes it from the checkpoints: every target paused once and owned, one summary saying from whom it was taken over', async () => {
    const engine = crash.engine('worker-crash');
    const current = engine;
    const runId = await engine.enqueue(POLICY, 'fleet-pause');
    const first = crash.startWorker(engine);
    const checkpointed = () => current.redis.hlen(current.keys.runTargets(runId));
    await eventually('the first worker well into the run', async () => (await checkpointed()) >= 6, 15_000);
    const killedAt = Date.now();
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    const doneByFirst = await checkpointed();
    expect(doneByFirst).toBeLessThan(TARGETS);
    expect(await engine.history.get(runId)).toBeUndefined();

    const second = crash.startWorker(engine);
    const run = await engine.waitForRun(runId, 20_000).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n--- second worker:\n${second.output()}`);
    });

    expect(run).toMatchObject({
      outcome: 'succeeded',
      deliveries: 2,
      counts: { total: TARGETS, failed: 0, skipped: 0 },
      takenOverFrom: `${hostname()}:${first.child.pid}`,
    });
    // the run's first start is kept: it began on the worker that was killed
    expect(Date.parse(run.startedAt as string)).toBeLessThan(killedAt);
    expect(second.output()).toContain('run taken over from a worker that stopped mid-run');
    // what the killed worker paused (checkpointed or not) is owned: its intents were written first
    const owned = await engine.state.ledger.all();
    expect(owned.size).toBe(TARGETS);
    for (const record of owned.values())
      expect(record).toMatchObject({ owner: 'fleet-pause', runId, state: 'confirmed' });
    // what the first worker finished was not done again: those records came from its checkpoints
    expect(run.counts.succeeded).toBeGreaterThanOrEqual(doneByFirst);
    await eventually('every workspace Stopped', () => workspacesNot(crash.sim, 'Stopped').length === 0);
    // each workspace was paused exactly once, by one worker or the other
    const calls = pauseRequests(crash.sim);
    expect(calls.size).toBe(TARGETS);
    for (const made of calls.values()) expect(made.map((call) => call.status)).toEqual([200]);

    expect(await engine.history.count({ job: 'fleet-pause' })).toBe(1);
    await eventually(
      'the BullMQ job completed',
      async () => (await (await current.queue.getJob(runId))?.getState()) === 'completed',
    );
    expect(await engine.redis.exists(engine.keys.runTargets(runId), engine.keys.runLock('fleet-pause'))).toBe(
      0,
    );
    expect(await second.stop('SIGTERM')).toBe(0);
  });
});

describe('a run whose workers die under it more often than allowed', () => {
  it('is recorded as failed with the targets its checkpoints hold, and its job lock and checkpoints released', async () => {
    crash.sim.reset(); // every workspace Active again: the run has a pause to make on each
    const engine = crash.engine('worker-crash-abandoned');
    const current = engine;
    const runId = await engine.enqueue(POLICY, 'fleet-pause');
    const first = crash.startWorker(engine);
    const checkpointed = () => current.redis.hlen(current.keys.runTargets(runId));
    await eventually('the first worker well into the run', async () => (await checkpointed()) >= 6, 15_000);
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    const doneByFirst = await checkpointed();

    // allows no stall at all: the killed worker's run is failed when it is next picked up
    engine.worker(crash.sim.url, { maxStalledCount: 0, lockDurationMs: 1_500 });
    const run = await engine.waitForRun(runId, 20_000);

    expect(run).toMatchObject({ outcome: 'failed', action: 'pause', trigger: 'manual' });
    expect(run).toMatchObject({ deliveries: 1 });
    expect(run.reason).toBe(
      'abandoned: a worker stopped while running it, 1 time (job stalled more than allowable limit); targets not listed were not finished',
    );
    expect(run.targets).toHaveLength(doneByFirst);
    expect(run.counts).toMatchObject({ total: doneByFirst, failed: 0 });
    expect(await engine.history.count({ job: 'fleet-pause' })).toBe(1);
    await eventually(
      'the BullMQ job failed',
      async () => (await (await current.queue.getJob(runId))?.getState()) === 'failed',
    );
    expect(await engine.redis.exists(engine.keys.runTargets(runId), engine.keys.runLock('fleet-pause'))).toBe(
      0,
    );
    expect(engine.lines('run abandoned')).toHaveLength(1);
  });
});

/**
 * Found by the drill: a killed worker's run lost its job's run lock when the lock expired
 * together with BullMQ's claim, so the next tick's run, waiting its turn (`overlap: queue`),
 * took the lock before the stalled-job check had handed the killed run to another worker; the
 * two runs of the job then ran out of order, the older one last.
 */
describe("a killed worker's run and the job's next run (overlap: queue)", () => {
  const QUEUED_POLICY = POLICY.replace('concurrency: 2', 'concurrency: 1\n    overlap: queue');

  it('are executed one at a time and in order: the resumed run keeps the lock, the next one waits for it', async () => {
    crash.sim.reset(); // every workspace Active again: the first run has a pause to make on each
    const engine = crash.engine('lock-handover');
    const current = engine;
    const first = await engine.enqueue(QUEUED_POLICY, 'fleet-pause');
    const doomed = crash.startWorker(current);
    await eventually(
      'the first run under way',
      async () => (await current.redis.hlen(current.keys.runTargets(first))) >= 3,
      15_000,
    );
    const second = await engine.enqueue(QUEUED_POLICY, 'fleet-pause');
    crash.startWorker(current);
    await eventually(
      'the second run waiting for the job lock',
      async () => (await (await current.queue.getJob(second))?.getState()) === 'delayed',
      15_000,
    );
    expect(await doomed.stop('SIGKILL')).toBe('SIGKILL');
    crash.startWorker(current);

    const [firstRun, secondRun] = await Promise.all([
      engine.waitForRun(first, 30_000),
      engine.waitForRun(second, 30_000),
    ]);
    expect(firstRun).toMatchObject({ outcome: 'succeeded', deliveries: 2 });
    expect(secondRun.outcome).toBe('succeeded');
    expect(Date.parse(secondRun.startedAt as string)).toBeGreaterThanOrEqual(
      Date.parse(firstRun.finishedAt as string),
    );
    // the first run paused every workspace (one in flight at the kill may be found already paused), the second none
    const total = TARGETS;
    expect(firstRun.counts).toMatchObject({ total, failed: 0 });
    expect(firstRun.counts.succeeded).toBeGreaterThanOrEqual(total - 1);
    expect(secondRun.counts).toMatchObject({ total, skipped: total });
    await eventually('every workspace Stopped', () => workspacesNot(crash.sim, 'Stopped').length === 0);
    for (const made of pauseRequests(crash.sim).values())
      expect(made.map((call) => call.status)).toEqual([200]);
  }, 60_000);
});
