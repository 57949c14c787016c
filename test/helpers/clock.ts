import type { Clock } from '../../src/engine/index.js';

/** A clock whose sleeps return at once, moving its time on by what they would have waited. */
export function instantClock(start = Date.parse('2026-11-20T12:00:00Z')): Clock & { elapsedMs(): number } {
  let now = start;
  return {
    now: () => new Date(now),
    async sleep(ms, signal) {
      signal?.throwIfAborted();
      now += ms;
      // a turn of the event loop, as a timer gives: what the sleep waited for may come meanwhile
      await new Promise<void>((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    },
    elapsedMs: () => now - start,
  };
}
