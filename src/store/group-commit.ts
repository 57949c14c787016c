import { performance } from 'node:perf_hooks';

/**
 * Under a steady stream of writes, how far apart a turn's flushes leave at least. Redis answers a
 * flush in about a millisecond, so without it a 10,000-workspace pause made a write every
 * millisecond of a few targets each: one every 2 ms halves the writes (and the answers read), at
 * most 2 ms more for an intent before its call, against the call's own tens of milliseconds. A
 * write after a quiet spell leaves at once.
 */
const FLUSH_SPACING_MS = 2;

/** A group commit with items waiting and no write under way. */
interface Flushable {
  /** Starts the write of what waits; settles once its callers have their answers. */
  flush(): Promise<void>;
}

/**
 * The group commits that write over one connection, flushed together: at the end of an event loop
 * turn (after every answer that arrived in it was handled), only while none of their writes is
 * under way, and at most every `spacingMs`. Their commands (a run's intents, confirmations and
 * checkpoints) then leave in one pipeline, one socket write, and whatever arrives meanwhile waits
 * for the next one, instead of each commit writing whenever its own last answer arrived.
 */
export class FlushTurn {
  readonly #spacingMs: number;
  readonly #ready = new Set<Flushable>();
  #scheduled = false;
  #writing = false;
  #flushedAt = Number.NEGATIVE_INFINITY;

  constructor({ spacingMs = FLUSH_SPACING_MS } = {}) {
    this.#spacingMs = spacingMs;
  }

  schedule(commit: Flushable): void {
    this.#ready.add(commit);
    this.#arm();
  }

  #arm(): void {
    if (this.#scheduled || this.#writing || this.#ready.size === 0) return;
    this.#scheduled = true;
    const wait = this.#flushedAt + this.#spacingMs - performance.now();
    if (wait > 0) setTimeout(() => this.#flush(), wait);
    else setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    this.#flushedAt = performance.now();
    const ready = [...this.#ready];
    this.#ready.clear();
    this.#writing = true;
    void Promise.allSettled(ready.map((commit) => commit.flush())).then(() => {
      this.#writing = false;
      this.#arm();
    });
  }
}

/** One turn per connection: what writes over it goes together (see `FlushTurn`). */
const turns = new WeakMap<object, FlushTurn>();

export function flushTurnOf(connection: object): FlushTurn {
  let turn = turns.get(connection);
  if (!turn) {
    turn = new FlushTurn();
    turns.set(connection, turn);
  }
  return turn;
}

export interface GroupCommitOptions {
  /** Most items a write takes. Default 1,000. */
  maxBatch?: number;
  /** The commits flushed together with this one. Default: a turn of its own. */
  turn?: FlushTurn;
  /** Called when the last write has settled and nothing waits: the owner may forget this commit. */
  onIdle?: () => void;
}

/**
 * Writes that many callers make at once go to Redis together: the first write of a burst leaves
 * at the end of the event loop's turn, and whatever arrives while it is under way goes in the
 * next one, one round trip for all of them. No caller's promise settles before its own item was
 * written (or failed with the batch's error), so a write that must be durable before what follows
 * it still is.
 */
export class GroupCommit<In, Out> implements Flushable {
  readonly #write: (items: readonly In[]) => Promise<readonly Out[]>;
  readonly #maxBatch: number;
  readonly #turn: FlushTurn;
  readonly #onIdle: (() => void) | undefined;
  #queue: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  /** A write is under way, or this commit waits for its turn's flush. */
  #busy = false;

  constructor(write: (items: readonly In[]) => Promise<readonly Out[]>, options: GroupCommitOptions = {}) {
    this.#write = write;
    this.#maxBatch = options.maxBatch ?? 1_000;
    this.#turn = options.turn ?? new FlushTurn();
    this.#onIdle = options.onIdle;
  }

  submit(item: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#busy) return;
      this.#busy = true;
      this.#turn.schedule(this);
    });
  }

  async flush(): Promise<void> {
    const batch = this.#queue.splice(0, this.#maxBatch);
    try {
      const outs = await this.#write(batch.map(({ item }) => item));
      for (const [index, { resolve }] of batch.entries()) resolve(outs[index] as Out);
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
    if (this.#queue.length > 0) {
      this.#turn.schedule(this);
      return;
    }
    this.#busy = false;
    this.#onIdle?.();
  }
}
