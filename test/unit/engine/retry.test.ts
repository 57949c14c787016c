import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/index.js';
import {
  AttemptsFailedError,
  isThrottle,
  MAX_BACKOFF_MS,
  type RetryWait,
  retryDelay,
  throttleDelay,
  withRetries,
} from '../../../src/engine/retry.js';

const policy = { attempts: 4, backoff: 100, strategy: 'exponential' as const };
const apiError = (status: number, type: string, retryAfterMs?: number) =>
  new ApiError({ operation: 'op', method: 'GET', path: '/', status, type, reason: 'x', retryAfterMs });
const transient = () => apiError(500, 'Internal-Error');
const permanent = () => apiError(400, 'Bad-Request');
const throttled = (retryAfterMs?: number, status = 429) => apiError(status, 'Quota-Exceed', retryAfterMs);

describe('retryDelay', () => {
  it('doubles the base wait per attempt and jitters within its upper half', () => {
    expect(retryDelay(policy, 1, undefined, () => 0)).toBe(50);
    expect(retryDelay(policy, 1, undefined, () => 1)).toBe(100);
    expect(retryDelay(policy, 3, undefined, () => 1)).toBe(400);
  });

  it('keeps a fixed wait for the fixed strategy', () => {
    expect(retryDelay({ ...policy, strategy: 'fixed' }, 5, undefined, () => 1)).toBe(100);
  });

  it('never waits less than the server asked with Retry-After', () => {
    expect(retryDelay(policy, 1, 2_000, () => 0)).toBe(2_000);
  });

  it('caps a wait at five minutes however many attempts a policy allows', () => {
    expect(retryDelay(policy, 40, undefined, () => 1)).toBe(MAX_BACKOFF_MS);
  });
});

describe('withRetries', () => {
  const signal = new AbortController().signal;
  const fast = { attempts: 4, backoff: 1, strategy: 'fixed' as const };

  it('retries a retryable ApiError until it succeeds', async () => {
    let calls = 0;
    const result = await withRetries(fast, signal, async () => {
      calls++;
      if (calls < 3) throw transient();
      return 'ok';
    });
    expect(result).toEqual({ value: 'ok', attempts: 3, throttled: 0 });
  });

  it('stops at the policy attempts and reports how many were spent', async () => {
    let calls = 0;
    const error = await withRetries(fast, signal, async () => {
      calls++;
      throw transient();
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AttemptsFailedError);
    expect((error as AttemptsFailedError).attempts).toBe(4);
    expect(calls).toBe(4);
  });

  it('does not retry a permanent error', async () => {
    let calls = 0;
    const error = await withRetries(fast, signal, async () => {
      calls++;
      throw permanent();
    }).catch((e: unknown) => e);
    expect((error as AttemptsFailedError).attempts).toBe(1);
    expect(calls).toBe(1);
  });

  it('ends at once with the abort reason when the signal aborts during a wait', async () => {
    const controller = new AbortController();
    const pending = withRetries(
      { attempts: 5, backoff: 60_000, strategy: 'fixed' },
      controller.signal,
      async () => {
        throw transient();
      },
    );
    setTimeout(() => controller.abort(new Error('shutdown')), 20);
    await expect(pending).rejects.toThrow('shutdown');
  });
});

describe('isThrottle', () => {
  it('is a 429 whatever its Type, or a Quota-Exceed whatever its status', () => {
    expect(isThrottle(throttled())).toBe(true);
    expect(isThrottle(throttled(undefined, 503))).toBe(true);
    expect(isThrottle(apiError(429, 'Unknown'))).toBe(true);
  });

  it('is neither a server error nor a 429 whose Type says the request will never pass', () => {
    expect(isThrottle(transient())).toBe(false);
    expect(isThrottle(apiError(429, 'Forbidden'))).toBe(false);
  });
});

describe('throttleDelay', () => {
  it('waits exactly the Retry-After, neither jittered nor raised to the backoff', () => {
    expect(throttleDelay(policy, 1, 1_000, () => 1)).toBe(1_000);
    expect(throttleDelay({ ...policy, backoff: 10_000 }, 3, 1_000, () => 1)).toBe(1_000);
  });

  it('without a Retry-After (or with 0) waits the backoff, growing with each throttle', () => {
    expect(throttleDelay(policy, 1, undefined, () => 1)).toBe(100);
    expect(throttleDelay(policy, 3, undefined, () => 1)).toBe(400);
    expect(throttleDelay(policy, 2, 0, () => 0)).toBe(100);
  });
});

describe('withRetries and throttling', () => {
  const signal = new AbortController().signal;
  const twice = { attempts: 2, backoff: 1, strategy: 'fixed' as const };

  it('does not count a throttled try as an attempt: 5 throttles and a 500 still succeed with 2 attempts', async () => {
    const tries: number[] = [];
    const waits: RetryWait[] = [];
    const result = await withRetries(
      twice,
      signal,
      async (attempt) => {
        tries.push(attempt);
        if (attempt <= 5) throw throttled(1);
        if (attempt === 6) throw transient();
        return 'ok';
      },
      (wait) => waits.push(wait),
    );
    expect(result).toEqual({ value: 'ok', attempts: 2, throttled: 5 });
    // the try number goes on counting, so a step re-reads what an earlier try may have changed
    expect(tries).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(waits.map(({ throttle, attempts, throttled: count }) => ({ throttle, attempts, count }))).toEqual([
      ...[1, 2, 3, 4, 5].map((count) => ({ throttle: true, attempts: 0, count })),
      { throttle: false, attempts: 1, count: 5 },
    ]);
  });

  it('waits as long as the Retry-After says before the next try', async () => {
    const times: number[] = [];
    const waits: RetryWait[] = [];
    await withRetries(
      twice,
      signal,
      async () => {
        times.push(performance.now());
        if (times.length === 1) throw throttled(60);
        return 'ok';
      },
      (wait) => waits.push(wait),
    );
    expect(waits[0]?.delayMs).toBe(60);
    expect((times[1] as number) - (times[0] as number)).toBeGreaterThanOrEqual(59);
  });

  it('waits out throttles even with attempts: 1, which only turns off retries of failures', async () => {
    let calls = 0;
    const result = await withRetries({ ...twice, attempts: 1 }, signal, async () => {
      if (++calls < 3) throw throttled(1);
      return 'ok';
    });
    expect(result).toEqual({ value: 'ok', attempts: 1, throttled: 2 });
    const failed = await withRetries({ ...twice, attempts: 1 }, signal, async () => {
      throw transient();
    }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ attempts: 1, throttled: 0 });
  });

  it('says how many tries were throttled when the attempts run out', async () => {
    let calls = 0;
    const error = await withRetries(twice, signal, async () => {
      throw ++calls % 2 === 1 ? throttled(1) : transient();
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AttemptsFailedError);
    expect(error).toMatchObject({ attempts: 2, throttled: 2 });
    expect(calls).toBe(4);
  });

  it("tries a throttled operation until the signal ends it, then ends with the signal's reason", async () => {
    const controller = new AbortController();
    const waits: RetryWait[] = [];
    const pending = withRetries(
      { attempts: 2, backoff: 10, strategy: 'fixed' },
      controller.signal,
      async () => {
        throw throttled();
      },
      (wait) => {
        waits.push(wait);
        if (waits.length === 20) controller.abort(new Error('the run timed out'));
      },
    );
    await expect(pending).rejects.toThrow('the run timed out');
    expect(waits).toHaveLength(20);
    // no Retry-After: the fixed backoff, jittered in its upper half
    for (const wait of waits) expect(wait.delayMs).toBeGreaterThanOrEqual(5);
    expect(waits.every((wait) => wait.throttle && wait.attempts === 0)).toBe(true);
  });
});
