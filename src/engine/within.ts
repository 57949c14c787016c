/** What `within` resolves to when the wait ran out first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * What `work` settles to, or TIMED_OUT once `ms` have passed without it: the wait ends, `work`
 * itself goes on (a Redis command during an outage may wait in ioredis's offline queue for as long
 * as the outage lasts, and BullMQ's close for a Redis that never comes back).
 */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
