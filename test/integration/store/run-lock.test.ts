import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/index.js';
import { redisKeys } from '../../../src/store/keys.js';
import { RunLock } from '../../../src/store/run-lock.js';
import { RunStarts } from '../../../src/store/run-starts.js';
import { Suspensions } from '../../../src/store/suspensions.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => ({ redis } = client));

/** Admits as a scheduled run of a job that does not allow overlap: suspension checked, lock taken. */
const taking = { exclusive: true, checkSuspension: true };

describe('RunLock', () => {
  it('renews the lock a full TTL when the run taking it already holds it, so a resuming execution cannot lose it before its first renewal', async () => {
    const prefix = uniquePrefix('run-lock');
    const lock = new RunLock(redis, { prefix, ttlMs: 60_000, log: silentLogger });
    const key = redisKeys(prefix).runLock('nightly');
    // what a stopped execution leaves: its run's lock, most of its TTL gone
    await redis.set(key, 'nightly@1', 'PX', 500);
    expect(await lock.admit('nightly', 'nightly@1', taking)).toEqual({ verdict: 'admitted', seq: 0 });
    expect(await redis.pttl(key)).toBeGreaterThan(59_000);
  });

  it('names the run holding the lock to another run of the job, and leaves that lock as it was', async () => {
    const prefix = uniquePrefix('run-lock');
    const lock = new RunLock(redis, { prefix, ttlMs: 60_000, log: silentLogger });
    const key = redisKeys(prefix).runLock('nightly');
    expect(await lock.admit('nightly', 'nightly@1', taking)).toEqual({ verdict: 'admitted', seq: 0 });
    await redis.pexpire(key, 5_000);
    expect(await lock.admit('nightly', 'nightly@2', taking)).toEqual({
      verdict: 'locked',
      holder: 'nightly@1',
    });
    expect(await redis.get(key)).toBe('nightly@1');
    expect(await redis.pttl(key)).toBeLessThanOrEqual(5_000);
  });

  it('admits no run of a suspended job, in the same step as the lock, and leaves the lock free', async () => {
    const prefix = uniquePrefix('run-lock');
    const lock = new RunLock(redis, { prefix, ttlMs: 60_000, log: silentLogger });
    await new Suspensions(redis, { prefix }).suspend('nightly', { reason: 'maintenance', by: 'ops' });

    expect(await lock.admit('nightly', 'nightly@1', taking)).toMatchObject({
      verdict: 'suspended',
      suspension: { job: 'nightly', reason: 'maintenance', by: 'ops' },
    });
    expect(await redis.exists(redisKeys(prefix).runLock('nightly'))).toBe(0);
    // a run started by hand is not held back by the suspension
    expect(await lock.admit('nightly', 'nightly@2', { exclusive: true, checkSuspension: false })).toEqual({
      verdict: 'admitted',
      seq: 0,
    });
    expect(await redis.get(redisKeys(prefix).runLock('nightly'))).toBe('nightly@2');
  });

  it("judges a suspension with an end by the run's tick: a tick before the end is not admitted, one at or after it is, lock taken", async () => {
    const prefix = uniquePrefix('run-lock');
    const lock = new RunLock(redis, { prefix, ttlMs: 60_000, log: silentLogger });
    const end = Date.parse('2026-11-27T10:00:00Z');
    await redis.hset(
      redisKeys(prefix).suspended,
      'nightly',
      JSON.stringify({ job: 'nightly', since: '2026-11-27T08:00:00Z', until: new Date(end).toISOString() }),
    );
    expect(await lock.admit('nightly', 'nightly@1', { ...taking, suspendedAt: end - 1 })).toMatchObject({
      verdict: 'suspended',
    });
    expect(await redis.exists(redisKeys(prefix).runLock('nightly'))).toBe(0);
    expect(await lock.admit('nightly', 'nightly@2', { ...taking, suspendedAt: end })).toEqual({
      verdict: 'admitted',
      seq: 0,
    });
    expect(await redis.get(redisKeys(prefix).runLock('nightly'))).toBe('nightly@2');
  });

  it('reads a suspension record nobody can read as a suspension (failing safe), and overlapping runs take no lock', async () => {
    const prefix = uniquePrefix('run-lock');
    const lock = new RunLock(redis, { prefix, ttlMs: 60_000, log: silentLogger });
    await redis.hset(redisKeys(prefix).suspended, 'nightly', 'not json');
    expect(await lock.admit('nightly', 'nightly@1', taking)).toMatchObject({
      verdict: 'suspended',
      suspension: { reason: 'unreadable suspension record' },
    });
    await redis.hdel(redisKeys(prefix).suspended, 'nightly');
    expect(await lock.admit('nightly', 'nightly@1', { exclusive: false, checkSuspension: true })).toEqual({
      verdict: 'admitted',
      seq: 0,
    });
    expect(await redis.exists(redisKeys(prefix).runLock('nightly'))).toBe(0);
  });

  it('records an admitted run’s start in the same step: its first start kept, the worker it is taken over from named, none for a run not admitted', async () => {
    const prefix = uniquePrefix('run-lock');
    const starts = new RunStarts(redis, { prefix });
    const lock = new RunLock(redis, { prefix, ttlMs: 60_000, log: silentLogger, starts });
    const at = (minutes: number) => new Date(Date.UTC(2026, 10, 27, 2, minutes));
    expect(
      await lock.admit('nightly', 'nightly@1', { ...taking, start: { worker: 'host:1', at: at(0) } }),
    ).toEqual({ verdict: 'admitted', seq: 0, start: { startedAt: at(0), previousWorker: undefined } });
    // the run redelivered to another worker (a takeover)
    expect(
      await lock.admit('nightly', 'nightly@1', { ...taking, start: { worker: 'host:2', at: at(5) } }),
    ).toEqual({ verdict: 'admitted', seq: 0, start: { startedAt: at(0), previousWorker: 'host:1' } });
    expect(await redis.pttl(redisKeys(prefix).runStart('nightly@1'))).toBeGreaterThan(6 * 86_400_000);

    // the next run of the job finds the lock held: not admitted, so not started
    expect(
      await lock.admit('nightly', 'nightly@2', { ...taking, start: { worker: 'host:1', at: at(6) } }),
    ).toEqual({ verdict: 'locked', holder: 'nightly@1' });
    expect(await redis.exists(redisKeys(prefix).runStart('nightly@2'))).toBe(0);

    // a run that takes no lock and checks no suspension still has its start recorded
    const overlapping = { exclusive: false, checkSuspension: false, start: { worker: 'host:3', at: at(7) } };
    expect(await lock.admit('hourly', 'hourly@1', overlapping)).toEqual({
      verdict: 'admitted',
      seq: 0,
      start: { startedAt: at(7), previousWorker: undefined },
    });
    await starts.clear('nightly@1');
    expect(
      await lock.admit('nightly', 'nightly@1', { ...taking, start: { worker: 'host:3', at: at(8) } }),
    ).toEqual({ verdict: 'admitted', seq: 0, start: { startedAt: at(8), previousWorker: undefined } });
  });

  it("tells an admitted run the ownership ledger's sequence as of its admission, which its first listing is ordered after", async () => {
    const prefix = uniquePrefix('run-lock');
    const lock = new RunLock(redis, { prefix, ttlMs: 60_000, log: silentLogger });
    await redis.set(redisKeys(prefix).ledgerSequence, '41');
    expect(await lock.admit('nightly', 'nightly@1', taking)).toEqual({ verdict: 'admitted', seq: 41 });
    await redis.incr(redisKeys(prefix).ledgerSequence);
    expect(await lock.admit('nightly', 'nightly@1', taking)).toEqual({ verdict: 'admitted', seq: 42 });
  });
});
