import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../../src/sim/index.js';
import { Engine, eventually, pauseRequests, startFleetSim, workspacesNot } from '../../helpers/engine.js';
import { DOWN_AFTER_MS, startRedisSentinels, useTopology } from '../../helpers/redis-topologies.js';

const FLEET = { workgroups: 6, workspacesPerWorkgroup: 10 };
const TARGETS = FLEET.workgroups * FLEET.workspacesPerWorkgroup;

const sentinels = useTopology(startRedisSentinels);
let sim: SimulatorHandle;

beforeAll(async () => {
  // 100 ms per pause and 300 ms to stop, two at a time: a run of the fleet takes several seconds,
  // longer than a failover
  sim = await startFleetSim(FLEET, {
    transitionMs: 300,
    faults: { latencyMs: 100, operations: ['pauseWorkspace'] },
  });
});

afterAll(async () => {
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

/** The first pause request after the longest silence that began after `killedAt`: when the run resumed. */
function resumedAt(sim: SimulatorHandle, killedAt: number): number {
  const times = [...pauseRequests(sim).values()]
    .flatMap((calls) => calls.map((call) => call.at))
    .sort((a, b) => a - b);
  let longest = { gap: 0, resumed: Number.NaN };
  for (let i = 1; i < times.length; i++) {
    const [before, after] = [times[i - 1] as number, times[i] as number];
    if (after > killedAt && after - Math.max(before, killedAt) > longest.gap)
      longest = { gap: after - Math.max(before, killedAt), resumed: after };
  }
  return longest.resumed;
}

describe('Sentinels failing over from a primary killed mid-run', () => {
  it('the run finishes on the new primary, with every workspace paused once and owned', async () => {
    const engine = new Engine(sentinels.current.connect, 'sentinel-failover');
    try {
      const firstPrimary = await sentinels.current.primaryPort();
      engine.worker(sim.url);
      const runId = await engine.enqueue(POLICY, 'fleet-pause');
      const checkpointed = () => engine.redis.hlen(engine.keys.runTargets(runId));
      await eventually(
        'the run a third of the way',
        async () => (await checkpointed()) >= TARGETS / 3,
        20_000,
      );
      const doneBefore = await checkpointed();
      const killedAt = await sentinels.current.killPrimary();

      const run = await engine.waitForRun(runId, 40_000);
      const resumed = resumedAt(sim, killedAt);
      expect(await sentinels.current.primaryPort()).not.toBe(firstPrimary);
      expect(run).toMatchObject({ outcome: 'succeeded', counts: { total: TARGETS, failed: 0 } });
      expect(doneBefore).toBeLessThan(TARGETS);
      await eventually('every workspace Stopped', () => workspacesNot(sim, 'Stopped').length === 0);
      const calls = pauseRequests(sim);
      expect(calls.size).toBe(TARGETS);
      for (const made of calls.values()) expect(made.map((call) => call.status)).toEqual([200]);
      // BullMQ's record of the run, on the new primary, completed too
      await eventually(
        'the BullMQ job completed',
        async () => (await (await engine.queue.getJob(runId))?.getState()) === 'completed',
      );
      const owned = await engine.state.ledger.all();
      expect(owned.size).toBe(TARGETS);
      for (const record of owned.values())
        expect(record).toMatchObject({ owner: 'fleet-pause', runId, state: 'confirmed' });
      // the Sentinels wait DOWN_AFTER_MS before they call the primary down; the run waits no longer than a few times that
      const pausedFor = resumed - killedAt;
      expect(pausedFor).toBeGreaterThan(DOWN_AFTER_MS);
      expect(pausedFor).toBeLessThan(10 * DOWN_AFTER_MS);
      console.info(
        `failover: run resumed ${pausedFor} ms after SIGKILL of the primary (down-after ${DOWN_AFTER_MS} ms)`,
      );
    } finally {
      await engine.close();
    }
  });
});
