import type { Clock } from '../time/index.js';

export interface TickGateOptions {
  /** The clock ticks are read from and waited on. */
  clock: Clock;
  /** Aborting it lets every wait go at once, answering false. */
  signal: AbortSignal;
}

/**
 * Holds runs until their tick (they are handed over ahead of it). One timer per instant for
 * every run held for it: when it fires, all of them go on in one pass of the event loop,
 * before any of their I/O is handled; with a timer each, the runs first released would answer
 * their Redis and API replies before the last were released.
 */
export class TickGate {
  readonly #clock: Clock;
  readonly #signal: AbortSignal;
  /** Per instant, the wait of the runs held for it. */
  readonly #waits = new Map<number, Promise<boolean>>();

  constructor(options: TickGateOptions) {
    this.#clock = options.clock;
    this.#signal = options.signal;
  }

  /** True once the clock reads `at` (at once if it has), false if the signal aborts first. */
  until(at: number): Promise<boolean> {
    if (this.#signal.aborted) return Promise.resolve(false);
    const now = this.#clock.now();
    if (at <= now) return Promise.resolve(true);
    let wait = this.#waits.get(at);
    if (!wait) {
      wait = this.#sleepUntil(at, now).then(
        () => true,
        () => false,
      );
      this.#waits.set(at, wait);
      void wait.then(() => this.#waits.delete(at));
    }
    return wait;
  }

  /**
   * A timer may fire a millisecond early (libuv measures from the loop's cached time), and a run
   * must never start before its tick: the rest is slept again.
   */
  async #sleepUntil(at: number, now: number): Promise<void> {
    for (let left = at - now; left > 0; left = at - this.#clock.now())
      await this.#clock.sleep(left, this.#signal);
  }
}
