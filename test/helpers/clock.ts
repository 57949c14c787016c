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

/** A clock that reads `iso` now and runs on from there at the real pace. */
export function clockAt(iso: string): () => number {
  const offset = Date.parse(iso) - Date.now();
  return () => Date.now() + offset;
}

// An office window "Mon-Fri 07:30-19:30" in Europe/Berlin: Friday 2026-11-20 19:30 is 18:30Z (the
// off hours start), Monday 07:30 is 06:30Z; a minute after each edge
export const FRIDAY_EVENING = '2026-11-20T18:31:00Z';
export const MONDAY_MORNING = '2026-11-23T06:31:00Z';
