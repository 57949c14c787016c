import { describe, expect, it } from 'vitest';
import { type CliProcess, eventually, pauseRequests, workspacesNot } from '../helpers/engine.js';
import { POLICY, TARGETS, useCrashHarness } from './crash-harness.js';

const crash = useCrashHarness();

/** Workers that split runs into parts of 10 and take one run or part at a time. */
const PARTS_OF_TEN = { NIGHTSHIFT_RUN_PART_SIZE: '10', NIGHTSHIFT_WORKER_CONCURRENCY: '1' };

describe('a worker killed while the parts of a split run go', () => {
  it('leaves what it had to the other workers: every workspace paused once and owned, one summary', async () => {
    const engine = crash.engine('split-run-crash');
    const current = engine;
    const runId = await engine.enqueue(POLICY, 'fleet-pause');
    const [first] = [crash.startWorker(engine, PARTS_OF_TEN), crash.startWorker(engine, PARTS_OF_TEN)] as [
      CliProcess,
      CliProcess,
    ];
    const checkpointed = () => current.redis.hlen(current.keys.runTargets(runId));
    await eventually('the run well under way', async () => (await checkpointed()) >= 12, 15_000);
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    expect(await checkpointed()).toBeLessThan(TARGETS);
    crash.startWorker(engine, PARTS_OF_TEN);

    const run = await engine.waitForRun(runId, 30_000);
    expect(run).toMatchObject({ outcome: 'succeeded', counts: { total: TARGETS, failed: 0, skipped: 0 } });
    // what the killed worker paused (checkpointed or not) is owned: its intents were written first
    const owned = await engine.state.ledger.all();
    expect(owned.size).toBe(TARGETS);
    for (const record of owned.values())
      expect(record).toMatchObject({ owner: 'fleet-pause', runId, state: 'confirmed' });
    await eventually('every workspace Stopped', () => workspacesNot(crash.sim, 'Stopped').length === 0);
    const calls = pauseRequests(crash.sim);
    expect(calls.size).toBe(TARGETS);
    for (const made of calls.values()) expect(made.map((call) => call.status)).toEqual([200]);
    // the run listed the fleet, and again only if the killed worker held the run itself (not a part)
    expect(
      crash.sim.requests().filter((entry) => entry.operation === 'listWorkgroups').length,
    ).toBeLessThanOrEqual(2);
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
