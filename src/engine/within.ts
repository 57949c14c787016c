import { type Clock, systemClock } from '../time/index.js';

/** What `within` resolves to when the wait ran out first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * What `work` settles to, or TIMED_OUT once `ms` have passed on `clock` without it: the wait ends,
 * `work` itself goes on (a Redis command during an outage may wait in ioredis's offline queue for as
 * long as the outage lasts, and BullMQ's close for a Redis that never comes back).
 */
export async function within<T>(
  work: Promise<T>,
  ms: number,
  clock: Clock = systemClock,
): Promise<T | typeof TIMED_OUT> {
  let timer: { cancel(): void } | undefined;
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = clock.setTimer(ms, () => resolve(TIMED_OUT));
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    timer?.cancel();
  }
}
