import { describe, expect, it } from 'vitest';
import { LocalRateLimiter } from '../../../src/store/rate-limiter.js';
import { FakeClock } from '../../helpers/clock.js';

/** Whether `acquire` settles without waiting on a timer: a token was there. */
async function immediate(limiter: LocalRateLimiter): Promise<boolean> {
  const signal = AbortSignal.timeout(1);
  return limiter.acquire(signal).then(
    () => true,
    () => false,
  );
}

describe('LocalRateLimiter', () => {
  it('holds the burst, then one token per 1/rate seconds of its clock', async () => {
    const clock = new FakeClock();
    const limiter = new LocalRateLimiter({ ratePerSecond: 4, burst: 2, clock });
    expect([await immediate(limiter), await immediate(limiter), await immediate(limiter)]).toEqual([
      true,
      true,
      false,
    ]);
    await clock.advance(250);
    expect([await immediate(limiter), await immediate(limiter)]).toEqual([true, false]);
    // idle for a minute: no more than the burst saved up
    await clock.advance(60_000);
    expect([await immediate(limiter), await immediate(limiter), await immediate(limiter)]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('serves a burst at once, then paces callers at the rate, in the order they came', async () => {
    const limiter = new LocalRateLimiter({ ratePerSecond: 50, burst: 5 });
    const started = performance.now();
    const order: number[] = [];
    await Promise.all(Array.from({ length: 10 }, (_, i) => limiter.acquire().then(() => order.push(i))));
    const paced = performance.now() - started;
    expect(order).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(paced).toBeGreaterThanOrEqual(95);
    expect(paced).toBeLessThan(250);
  });

  it('rejects a waiting acquire with the abort reason, and callers queued behind it still get through', async () => {
    const limiter = new LocalRateLimiter({ ratePerSecond: 10, burst: 1 });
    await limiter.acquire();
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    const waiting = limiter.acquire(controller.signal);
    const behind = limiter.acquire();
    setTimeout(() => controller.abort(reason), 20);
    await expect(waiting).rejects.toBe(reason);
    await expect(behind).resolves.toBeUndefined();
    await expect(limiter.acquire(AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('rejects a rate that is not positive and a burst below one, and lets a slow rate through once', async () => {
    expect(() => new LocalRateLimiter({ ratePerSecond: 0 })).toThrow(
      /ratePerSecond must be a positive number/,
    );
    expect(() => new LocalRateLimiter({ ratePerSecond: 5, burst: 0.5 })).toThrow(
      /burst must be a number of at least 1/,
    );
    await expect(new LocalRateLimiter({ ratePerSecond: 0.1 }).acquire()).resolves.toBeUndefined();
  });
});
