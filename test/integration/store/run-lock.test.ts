import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/index.js';
import { redisKeys } from '../../../src/store/keys.js';
import { RunLock } from '../../../src/store/run-lock.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => ({ redis } = client));

describe('RunLock', () => {
  it('renews the lock a full TTL when the run taking it already holds it, so a resuming execution cannot lose it before its first renewal', async () => {
    const prefix = uniquePrefix('run-lock');
    const lock = new RunLock(redis, { prefix, ttlMs: 60_000, log: silentLogger });
    const key = redisKeys(prefix).runLock('nightly');
    // what a stopped execution leaves: its run's lock, most of its TTL gone
    await redis.set(key, 'nightly@1', 'PX', 500);
    expect(await lock.take('nightly', 'nightly@1')).toBeUndefined();
    expect(await redis.pttl(key)).toBeGreaterThan(59_000);
  });

  it('names the run holding the lock to another run of the job, and leaves that lock as it was', async () => {
    const prefix = uniquePrefix('run-lock');
    const lock = new RunLock(redis, { prefix, ttlMs: 60_000, log: silentLogger });
    const key = redisKeys(prefix).runLock('nightly');
    expect(await lock.take('nightly', 'nightly@1')).toBeUndefined();
    await redis.pexpire(key, 5_000);
    expect(await lock.take('nightly', 'nightly@2')).toBe('nightly@1');
    expect(await redis.get(key)).toBe('nightly@1');
    expect(await redis.pttl(key)).toBeLessThanOrEqual(5_000);
  });
});
