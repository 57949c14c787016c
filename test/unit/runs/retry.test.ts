import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/index.js';
import { AttemptsFailedError, MAX_BACKOFF_MS, retryDelay, withRetries } from '../../../src/runs/retry.js';

const policy = { attempts: 4, backoff: 100, strategy: 'exponential' as const };
const transient = () =>
  new ApiError({
    operation: 'op',
    method: 'GET',
    path: '/',
    status: 500,
    type: 'Internal-Error',
    reason: 'x',
  });
const permanent = () =>
  new ApiError({ operation: 'op', method: 'GET', path: '/', status: 400, type: 'Bad-Request', reason: 'x' });

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
    expect(result).toEqual({ value: 'ok', attempts: 3 });
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
    await expect(pending).rejects.toThrow();
  });
});
