/**
 * The targets of one run a worker works at once, shared by the run and every part of it the worker
 * holds: a split run's parts on one worker keep to the job's `concurrency` together, not each.
 */
export class RunSlots {
  readonly #size: number;
  #busy = 0;
  readonly #waiting: { rank: number; resolve: () => void }[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`RunSlots: size must be a positive integer, got ${size}`);
    this.#size = size;
  }

  /**
   * Resolves with the function that gives the slot back, once one is free. A freed slot goes to
   * the waiter of the lowest `rank` (a part's index), the first come among equals: the earliest
   * part a worker holds finishes first, and a later one only fills the slots it no longer needs.
   */
  async take(rank = 0): Promise<() => void> {
    if (this.#busy < this.#size) this.#busy += 1;
    else
      await new Promise<void>((resolve) => {
        const at = this.#waiting.findIndex((waiter) => waiter.rank > rank);
        this.#waiting.splice(at === -1 ? this.#waiting.length : at, 0, { rank, resolve });
      });
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.#waiting.shift();
      if (next) next.resolve();
      else this.#busy -= 1;
    };
  }
}

/** The slots of each run a worker holds now, made on the first of its executions and dropped after the last. */
export class RunSlotsByRun {
  readonly #runs = new Map<string, { slots: RunSlots; holders: number }>();

  /** The run's slots (`size` when they are made), and the function to call when this execution ends. */
  join(runId: string, size: number): { slots: RunSlots; release: () => void } {
    let held = this.#runs.get(runId);
    if (!held) {
      held = { slots: new RunSlots(size), holders: 0 };
      this.#runs.set(runId, held);
    }
    held.holders += 1;
    const run = held;
    let released = false;
    return {
      slots: run.slots,
      release: () => {
        if (released) return;
        released = true;
        run.holders -= 1;
        if (run.holders === 0) this.#runs.delete(runId);
      },
    };
  }
}
