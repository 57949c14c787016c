import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RunLock } from '../../../src/store/index.js';
import { captureLog, eventually, pauseRequests, useEngineHarness } from '../../helpers/engine.js';

// each pause answers after 300 ms, so a run of eight workspaces one at a time takes about 2.5 s
const harness = useEngineHarness(
  { workgroups: 1, workspacesPerWorkgroup: 8 },
  { faults: { latencyMs: 300, operations: ['pauseWorkspace'] } },
);

const POLICY = `version: 1
jobs:
  slow-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 1
`;

/** Holds the event loop, as a machine short of CPU holds a worker's. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no timer, no I/O callback runs meanwhile
  }
}

describe('a run whose job lock another run took', () => {
  it('stops before its next target, is recorded as failed naming the run holding the lock, and leaves that lock alone', async () => {
    const engine = harness.engine('lock-lost');
    // renewed every second; a confirmation older than that is asked of Redis before a target
    engine.worker(harness.sim.url, { lockDurationMs: 3_000 });
    const runId = await engine.enqueue(POLICY, 'slow-pause');
    await eventually('two pauses sent', () => pauseRequests(harness.sim).size >= 2, 10_000);
    // what a worker stalled past the lock's TTL finds when it wakes: a newer run of the job holds it
    await engine.redis.set(engine.keys.runLock('slow-pause'), 'slow-pause@newer', 'PX', 60_000);
    stall(1_500);
    const sentAtWake = pauseRequests(harness.sim).size;
    const summary = await engine.waitForRun(runId);
    expect(summary.outcome).toBe('failed');
    expect(summary.reason).toMatch(/run lock of job "slow-pause" is held by run slow-pause@newer/);
    // at most the pause already under way when it woke finishes; no other target is started
    expect(pauseRequests(harness.sim).size).toBeLessThanOrEqual(sentAtWake + 1);
    expect(summary.counts.succeeded).toBeLessThan(8);
    expect(await engine.redis.get(engine.keys.runLock('slow-pause'))).toBe('slow-pause@newer');
    expect(engine.lines('run lock lost to another run: run stopped')).toHaveLength(1);
  }, 30_000);
});

describe('RunLock.keep', () => {
  it('takes back a lock that expired unclaimed, and reports one another run holds once, as lost', async () => {
    const engine = harness.engine('lock-keep');
    const { log } = captureLog();
    const lock = new RunLock(engine.redis, { prefix: engine.prefix, ttlMs: 60_000, log });
    const key = engine.keys.runLock('job');
    expect(await lock.take('job', 'run-1')).toBeUndefined();
    const lost: string[] = [];
    const hold = lock.keep('job', 'run-1', 50, (holder) => lost.push(holder));
    try {
      await engine.redis.del(key);
      // older than the 50 ms renewal interval: the next confirmation asks Redis
      await sleep(60);
      expect(await hold.confirm()).toBe(true);
      expect(await engine.redis.get(key)).toBe('run-1');
      await engine.redis.set(key, 'run-2');
      await eventually('the loss is noticed', () => lost.length > 0, 2_000);
      expect(await hold.confirm()).toBe(false);
      expect(lost).toEqual(['run-2']);
      expect(await engine.redis.get(key)).toBe('run-2');
    } finally {
      hold.stop();
    }
  });
});
