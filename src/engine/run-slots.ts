/**
 * How many targets a pipelined step works at once per API call slot: while some targets' calls
 * are in flight, as many others write their ledger records and checkpoints around theirs.
 */
export const PIPELINE_DEPTH = 2;

/**
 * Slots handed out in turn: the targets, or the API calls, of one run a worker has under way at
 * once, shared by the run and every part of it the worker holds.
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

/**
 * A run's slots on a worker, shared by the run and every part of it the worker holds, so a split
 * run's parts on one worker keep to the job's `concurrency` together, not each:
 * - `calls`: the job's `concurrency`. A step that is not pipelined holds one for its whole target
 *   (its calls, and its waits between them); a pipelined step holds one per API call in flight.
 * - `targets`: PIPELINE_DEPTH × `concurrency`, the targets pipelined steps work at once.
 */
export class RunGates {
  readonly calls: RunSlots;
  readonly targets: RunSlots;

  constructor(concurrency: number) {
    this.calls = new RunSlots(concurrency);
    this.targets = new RunSlots(concurrency * PIPELINE_DEPTH);
  }
}

/** The slots of each run a worker holds now, made on the first of its executions and dropped after the last. */
export class RunSlotsByRun {
  readonly #runs = new Map<string, { slots: RunGates; holders: number }>();

  /** The run's slots (for `concurrency` when they are made), and the function to call when this execution ends. */
  join(runId: string, concurrency: number): { slots: RunGates; release: () => void } {
    let held = this.#runs.get(runId);
    if (!held) {
      held = { slots: new RunGates(concurrency), holders: 0 };
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
