import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LeaseExpiredError } from '../../../src/engine/index.js';
import { ExecutionLease, RunLeases } from '../../../src/store/index.js';
import { systemClock } from '../../../src/time/index.js';
import { captureLog, eventually, pauseRequests, useEngineHarness } from '../../helpers/engine.js';
import { ONE_AT_A_TIME_PAUSE } from '../../helpers/policies.js';

// each pause answers after 300 ms, so a run of eight workspaces one at a time takes about 2.5 s
const harness = useEngineHarness(
  { workgroups: 1, workspacesPerWorkgroup: 8 },
  { faults: { latencyMs: 300, operations: ['pauseWorkspace'] } },
);

const POLICY = ONE_AT_A_TIME_PAUSE;

/** Holds the event loop, as a machine short of CPU holds a worker's. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no timer, no I/O callback runs meanwhile
  }
}

describe('a run whose job lock another run took', () => {
  it('stops before its next call once its lease’s renewal finds the lock another run’s, is recorded as failed naming that run, and leaves that lock alone', async () => {
    const engine = harness.engine('lock-lost');
    // the lease (and the run lock with it) is renewed every second
    engine.worker(harness.sim.url, { lockDurationMs: 3_000 });
    const runId = await engine.enqueue(POLICY, 'slow-pause');
    await eventually('two pauses sent', () => pauseRequests(harness.sim).size >= 2, 10_000);
    await engine.redis.set(engine.keys.runLock('slow-pause'), 'slow-pause@newer', 'PX', 60_000);
    const sentThen = pauseRequests(harness.sim).size;
    const summary = await engine.waitForRun(runId);
    expect(summary.outcome).toBe('failed');
    expect(summary.reason).toMatch(/run lock of job "slow-pause" is held by run slow-pause@newer/);
    // a renewal a second at the most, a pause every 300 ms: at most four more start meanwhile
    expect(pauseRequests(harness.sim).size).toBeLessThanOrEqual(sentThen + 4);
    expect(summary.counts.succeeded).toBeLessThan(8);
    expect(await engine.redis.get(engine.keys.runLock('slow-pause'))).toBe('slow-pause@newer');
    expect(engine.lines('run lock lost to another run: run stopped')).toHaveLength(1);
  }, 30_000);
});

describe('a worker stalled past its lease', () => {
  // a simulator of its own: no call of another test's run can land in it
  const own = useEngineHarness(
    { workgroups: 1, workspacesPerWorkgroup: 8 },
    { faults: { latencyMs: 300, operations: ['pauseWorkspace'] } },
  );
  it('starts no call when it wakes: the run goes back to the queue and its next execution finishes it, each Active workspace paused once', async () => {
    const active = own.sim.state.workspaces.filter((ws) => ws.status === 'Active').length;
    const engine = own.engine('lease-stall');
    // a lease of 1.5 s: its holder stops acting 1.35 s after its last confirmed renewal
    engine.worker(own.sim.url, { lockDurationMs: 1_500 });
    const runId = await engine.enqueue(POLICY, 'slow-pause');
    await eventually('two pauses sent', () => pauseRequests(own.sim).size >= 2, 10_000);
    stall(2_000);
    const summary = await engine.waitForRun(runId, 20_000);
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { total: 8, succeeded: active } });
    expect(
      engine.lines(
        'run stopped: its lease ran out unconfirmed; the next delivery resumes it from its checkpoints',
      ),
    ).toHaveLength(1);
    // the call under way when it stalled may land; none starts from the stalled execution
    const pauses = own.sim
      .requests()
      .filter((entry) => entry.operation === 'pauseWorkspace' && entry.status === 200);
    expect(new Set(pauses.map((entry) => entry.path)).size).toBe(active);
    expect(pauses).toHaveLength(active);
    expect(summary.deliveries).toBeGreaterThanOrEqual(2);
  }, 30_000);
});

describe('RunLeases', () => {
  it('one execution at a time: a second finds the lease held and for how long; the holder renews it, stops acting at its deadline unconfirmed, and releases only its own', async () => {
    const engine = harness.engine('lease-unit');
    const { log } = captureLog();
    const leases = new RunLeases(engine.redis, { prefix: engine.prefix, ttlMs: 600, lockTtlMs: 1_800, log });
    const first = await leases.acquire('run-1', 'first');
    if (!(first instanceof ExecutionLease)) throw new Error('the first execution takes the lease');
    try {
      const second = await leases.acquire('run-1', 'second');
      expect(second).toEqual({ heldForMs: expect.any(Number) });
      if (second instanceof ExecutionLease) throw new Error('unreachable');
      expect(second.heldForMs).toBeGreaterThan(0);
      expect(second.heldForMs).toBeLessThanOrEqual(600);
      // renewed every 200 ms: still held and permitted well past the first TTL
      await sleep(900);
      expect(() => first.permit()).not.toThrow();
      expect(await engine.redis.get(engine.keys.runLease('run-1'))).toBe('first');
      // Redis no longer confirms it (another execution holds it now): the holder stops
      await engine.redis.set(engine.keys.runLease('run-1'), 'second');
      await eventually('the loss noticed', () => first.signal.aborted, 2_000);
      expect(first.signal.reason).toBeInstanceOf(LeaseExpiredError);
      expect(() => first.permit()).toThrow(LeaseExpiredError);
      await leases.release(first);
      expect(await engine.redis.get(engine.keys.runLease('run-1'))).toBe('second');
    } finally {
      first.stop();
    }
  });

  it('a holder that cannot reach Redis stops acting a tenth of the TTL before its lease can expire there', async () => {
    const engine = harness.engine('lease-deadline');
    const { log } = captureLog();
    let now = 0;
    const leases = new RunLeases(engine.redis, {
      prefix: engine.prefix,
      ttlMs: 60_000,
      lockTtlMs: 180_000,
      log,
      // its renewals are never sent: Redis is out of reach for it
      clock: { ...systemClock, monotonic: () => now, setTimer: () => ({ cancel: () => undefined }) },
    });
    const lease = await leases.acquire('run-2', 'only');
    if (!(lease instanceof ExecutionLease)) throw new Error('the lease is free');
    try {
      now = 53_999;
      expect(() => lease.permit()).not.toThrow();
      now = 54_000;
      expect(() => lease.permit()).toThrow(/not confirmed by Redis within 60000 ms/);
      expect(lease.signal.aborted).toBe(true);
    } finally {
      await leases.release(lease);
    }
  });
});
