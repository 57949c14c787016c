import { setTimeout as sleep } from 'node:timers/promises';

/** A timer set on a `Clock`; cancelling one that has fired (or was cancelled) does nothing. */
export interface Timer {
  cancel(): void;
}

/**
 * The one place nightshift reads the time and waits. Injected wherever time decides behaviour
 * (ticks, leases, deadlines, backoff, timestamps), so a test moves a fake clock on instead of
 * waiting real seconds.
 */
export interface Clock {
  /** Wall-clock time in milliseconds since the epoch: what ticks and recorded times are read from. */
  now(): number;
  /**
   * Milliseconds on a clock that never steps: what durations, leases and deadlines are measured
   * on, so an NTP step or a resumed laptop neither ends nor stretches one.
   */
  monotonic(): number;
  /** Resolves after `ms`; rejects with the signal's reason as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fire` once, `ms` from now, unless cancelled first. A timer with `keepAlive: false`
   * does not keep the process running by itself (a renewal or a poll, not the work).
   */
  setTimer(ms: number, fire: () => void, options?: { keepAlive?: boolean }): Timer;
}

/** The system's clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  async sleep(ms, signal) {
    try {
      await sleep(ms, undefined, signal ? { signal } : undefined);
    } catch (abort) {
      signal?.throwIfAborted(); // the signal's reason, not the timer's generic AbortError
      throw abort;
    }
  },
  setTimer(ms, fire, { keepAlive = true } = {}) {
    const timer = setTimeout(fire, Math.max(0, ms));
    if (!keepAlive) timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};
