import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Where the engine reads the time and waits, wherever time decides behaviour (deadlines, backoff,
 * how long ago a workspace was resumed). Injected, so a test can move time on instead of waiting
 * real seconds.
 */
export interface Clock {
  now(): Date;
  /** Resolves after `ms`; rejects with the signal's reason as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The system's clock and timers. */
export const systemClock: Clock = {
  now: () => new Date(),
  async sleep(ms, signal) {
    try {
      await sleep(ms, undefined, signal ? { signal } : undefined);
    } catch (abort) {
      signal?.throwIfAborted(); // the signal's reason, not the timer's generic AbortError
      throw abort;
    }
  },
};
