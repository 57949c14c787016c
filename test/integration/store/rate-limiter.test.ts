import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RateLimiter, RedisRateLimiter, unlimited } from '../../../src/store/rate-limiter.js';
import { createRedis } from '../../../src/store/redis.js';
import { startTestRedis, type TestRedis, uniquePrefix } from '../../helpers/redis.js';

let server: TestRedis;
let redis: Redis;
let other: Redis;

beforeAll(async () => {
  server = await startTestRedis();
  // Two connections stand in for two processes on two machines.
  redis = createRedis({ url: server.url, role: 'test' });
  other = createRedis({ url: server.url, role: 'test' });
});

afterAll(async () => {
  await Promise.all([redis.quit(), other.quit()]);
  await server.stop();
});

/** Callers that acquire in a loop until the deadline; returns how many acquires each admitted in time. */
async function hammer(limiter: RateLimiter, callers: number, deadline: number): Promise<number> {
  let admitted = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      const signal = AbortSignal.timeout(Math.max(0, deadline - Date.now()));
      try {
        for (;;) {
          await limiter.acquire(signal);
          if (Date.now() > deadline) return;
          admitted++;
        }
      } catch (error) {
        if (!signal.aborted) throw error;
      }
    }),
  );
  return admitted;
}

/**
 * The real client, counting the scripts it sends. Counted here rather than from INFO commandstats,
 * which would include other test files' calls when they share a Redis through REDIS_URL.
 */
function countingScripts(client: Redis): { client: Redis; calls: () => number } {
  let calls = 0;
  const counted = new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'evalsha' || property === 'eval') calls++;
        return value.apply(target, args);
      };
    },
  });
  return { client: counted, calls: () => calls };
}

describe('RedisRateLimiter', () => {
  it('admits rate × time + burst (±10%) across two processes sharing one bucket, each getting a fair share', async () => {
    const options = { name: 'api', ratePerSecond: 200, prefix: uniquePrefix('rate') };
    const limiters = [new RedisRateLimiter(redis, options), new RedisRateLimiter(other, options)];
    const durationMs = 2_000;
    const deadline = Date.now() + durationMs;
    const [first = 0, second = 0] = await Promise.all(
      limiters.map((limiter) => hammer(limiter, 4, deadline)),
    );
    const expected = (options.ratePerSecond * durationMs) / 1000 + options.ratePerSecond;
    expect(first + second).toBeGreaterThanOrEqual(expected * 0.9);
    expect(first + second).toBeLessThanOrEqual(expected * 1.1);
    expect(Math.min(first, second)).toBeGreaterThan((first + second) / 4);
  });

  it('serves a burst at once, then paces calls at the rate', async () => {
    const limiter = new RedisRateLimiter(redis, {
      name: 'api',
      ratePerSecond: 50,
      burst: 5,
      prefix: uniquePrefix('rate'),
    });
    const started = Date.now();
    for (let i = 0; i < 5; i++) await limiter.acquire();
    expect(Date.now() - started).toBeLessThan(50);
    for (let i = 0; i < 5; i++) await limiter.acquire();
    const paced = Date.now() - started;
    expect(paced).toBeGreaterThanOrEqual(95);
    expect(paced).toBeLessThan(200);
  });

  it('asks Redis about once per token however many callers of one process wait, and serves them in order', async () => {
    const { client, calls } = countingScripts(redis);
    const limiter = new RedisRateLimiter(client, {
      name: 'api',
      ratePerSecond: 100,
      burst: 1,
      prefix: uniquePrefix('rate'),
    });
    const order: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.acquire().then(() => order.push(i))));
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // Each token costs one call that takes it, plus usually one that learned how long to wait.
    expect(calls()).toBeLessThan(3 * 20);
  });

  it('keeps separate buckets for separate names', async () => {
    const prefix = uniquePrefix('rate');
    const a = new RedisRateLimiter(redis, { name: 'a', ratePerSecond: 1, burst: 3, prefix });
    const b = new RedisRateLimiter(other, { name: 'b', ratePerSecond: 1, burst: 3, prefix });
    const started = Date.now();
    await Promise.all([a, a, a, b, b, b].map((limiter) => limiter.acquire()));
    expect(Date.now() - started).toBeLessThan(100);
  });

  it('rejects a waiting acquire with the abort reason, and callers queued behind it still get through', async () => {
    const limiter = new RedisRateLimiter(redis, {
      name: 'api',
      ratePerSecond: 10,
      burst: 1,
      prefix: uniquePrefix('rate'),
    });
    await limiter.acquire();
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    const waiting = limiter.acquire(controller.signal);
    const behind = limiter.acquire();
    setTimeout(() => controller.abort(reason), 20);
    await expect(waiting).rejects.toBe(reason);
    const started = Date.now();
    await behind;
    expect(Date.now() - started).toBeLessThan(150);
    await expect(limiter.acquire(AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('rejects promptly on abort even while Redis is not answering', async () => {
    const limiter = new RedisRateLimiter(redis, {
      name: 'api',
      ratePerSecond: 10,
      prefix: uniquePrefix('rate'),
    });
    await other.client('PAUSE', 300, 'ALL');
    const started = Date.now();
    await expect(limiter.acquire(AbortSignal.timeout(50))).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(200);
    await redis.ping(); // answered once the pause is over
  });

  it('rejects a rate that is not positive and a burst below one', () => {
    expect(() => new RedisRateLimiter(redis, { name: 'x', ratePerSecond: 0 })).toThrow(/ratePerSecond/);
    expect(() => new RedisRateLimiter(redis, { name: 'x', ratePerSecond: 5, burst: 0.5 })).toThrow(/burst/);
    expect(() => new RedisRateLimiter(redis, { name: '', ratePerSecond: 5 })).toThrow(/name/);
  });

  it('lets a rate below one per second through once, by defaulting the burst to at least one', async () => {
    const limiter = new RedisRateLimiter(redis, {
      name: 'slow',
      ratePerSecond: 0.1,
      prefix: uniquePrefix('rate'),
    });
    await expect(limiter.acquire(AbortSignal.timeout(500))).resolves.toBeUndefined();
  });
});

describe('unlimited', () => {
  it('admits at once, unless the signal has already aborted', async () => {
    await expect(unlimited.acquire()).resolves.toBeUndefined();
    await expect(unlimited.acquire(AbortSignal.abort(new Error('stop')))).rejects.toThrow('stop');
  });
});
