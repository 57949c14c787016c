import { type Clock, systemClock, type Timer } from '../../src/time/index.js';

const START = Date.parse('2026-11-20T12:00:00Z');

interface PendingTimer {
  at: number;
  order: number;
  fire: () => void;
}

/**
 * A clock that moves only when told: `advance(ms)` fires every timer due in that time, in order,
 * letting the work each one starts settle (its in-memory I/O included) before the next, and
 * `jump(ms)` steps the wall clock alone, as an NTP step or a resumed laptop does. Time is shared
 * by everything given this clock, so two schedulers on it see the same instant.
 */
export class FakeClock implements Clock {
  #wall: number;
  #monotonic = 0;
  #order = 0;
  readonly #timers = new Set<PendingTimer>();

  constructor(start: number | string = START) {
    this.#wall = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.#wall;
  }

  monotonic(): number {
    return this.#monotonic;
  }

  setTimer(ms: number, fire: () => void): Timer {
    const timer = { at: this.#monotonic + Math.max(0, ms), order: this.#order++, fire };
    this.#timers.add(timer);
    return { cancel: () => void this.#timers.delete(timer) };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        timer.cancel();
        reject(signal?.reason);
      };
      const timer = this.setTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Timers set and not yet fired or cancelled. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time on by `ms`, firing each timer due meanwhile at its own instant. */
  async advance(ms: number): Promise<void> {
    const until = this.#monotonic + ms;
    await settle();
    for (let due = this.#nextDue(until); due; due = this.#nextDue(until)) {
      this.#timers.delete(due);
      this.#move(due.at - this.#monotonic);
      due.fire();
      await settle();
    }
    this.#move(until - this.#monotonic);
    await settle();
  }

  /** Moves time on to the wall-clock instant `iso` (see advance). */
  advanceTo(iso: string): Promise<void> {
    return this.advance(Date.parse(iso) - this.#wall);
  }

  /** Steps the wall clock by `ms` (back if negative) while monotonic time stands still. */
  jump(ms: number): void {
    this.#wall += ms;
  }

  #move(ms: number): void {
    this.#wall += ms;
    this.#monotonic += ms;
  }

  #nextDue(until: number): PendingTimer | undefined {
    let next: PendingTimer | undefined;
    for (const timer of this.#timers) {
      if (timer.at > until) continue;
      if (!next || timer.at < next.at || (timer.at === next.at && timer.order < next.order)) next = timer;
    }
    return next;
  }
}

/** Lets promise chains and I/O callbacks already due run, a few turns of the event loop deep. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A clock whose sleeps and timers return at once, moving its time on by what they would have
 * waited; `advance(ms)` moves it on by hand.
 */
export function instantClock(start = START): Clock & { elapsedMs(): number; advance(ms: number): void } {
  let wall = start;
  let monotonic = 0;
  const advance = (ms: number) => {
    wall += ms;
    monotonic += ms;
  };
  return {
    now: () => wall,
    monotonic: () => monotonic,
    async sleep(ms, signal) {
      signal?.throwIfAborted();
      advance(ms);
      // a turn of the event loop, as a timer gives: what the sleep waited for may come meanwhile
      await new Promise<void>((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    },
    setTimer: (ms, fire) =>
      systemClock.setTimer(0, () => {
        advance(ms);
        fire();
      }),
    elapsedMs: () => wall - start,
    advance,
  };
}

/**
 * The system's clock, reading the wall-clock time as if it were `iso` now (and running on from
 * there at the real pace); its timers are real. `set(iso)` moves it to another instant.
 */
export function clockAt(iso: string): Clock & { set(iso: string): void } {
  let offset = 0;
  const set = (at: string) => {
    offset = Date.parse(at) - Date.now();
  };
  set(iso);
  return { ...systemClock, now: () => Date.now() + offset, set };
}

// An office window "Mon-Fri 07:30-19:30" in Europe/Berlin: Friday 2026-11-20 19:30 is 18:30Z (the
// off hours start), Monday 07:30 is 06:30Z; a minute after each edge
export const FRIDAY_EVENING = '2026-11-20T18:31:00Z';
export const MONDAY_MORNING = '2026-11-23T06:31:00Z';
