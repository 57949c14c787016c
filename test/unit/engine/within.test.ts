import { afterEach, describe, expect, it, vi } from 'vitest';
import { TIMED_OUT, within } from '../../../src/engine/within.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('within', () => {
  it('settles as the work does when it answers in time, leaving no timer behind', async () => {
    vi.useFakeTimers();
    await expect(within(Promise.resolve('answered'), 1_000)).resolves.toBe('answered');
    await expect(within(Promise.reject(new Error('refused')), 1_000)).rejects.toThrow('refused');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves TIMED_OUT once the wait runs out, and a late failure of the work escapes nowhere', async () => {
    vi.useFakeTimers();
    let fail: (error: Error) => void = () => undefined;
    const work = new Promise<string>((_resolve, reject) => {
      fail = reject;
    });
    const waited = within(work, 1_000);
    await vi.advanceTimersByTimeAsync(999);
    let settled = false;
    void waited.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(waited).resolves.toBe(TIMED_OUT);
    fail(new Error('Redis gone'));
    await expect(work).rejects.toThrow('Redis gone');
  });
});
