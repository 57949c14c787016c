import type { ApiClient, CallOptions } from '../api/index.js';
import { NightshiftError } from '../errors/index.js';
import { type Clock, systemClock, type Timer } from '../time/index.js';
import { abortable } from './abortable.js';
import { callScope } from './call-scope.js';

type Listing = Awaited<ReturnType<ApiClient['listWorkgroups']>>;

/**
 * The ownership ledger did not answer when its sequence was read before the fleet was listed: a
 * run cannot order what it sees against the pauses on record, so it acts on nothing.
 */
export class LedgerUnansweredError extends NightshiftError {
  override name = 'LedgerUnansweredError';
  readonly code = 'NS_LEDGER_UNANSWERED';

  /** What a failed read of the ledger's sequence (`cause`) makes of a listing. */
  static of(cause: unknown): LedgerUnansweredError {
    return new LedgerUnansweredError(
      `Redis did not answer the ownership ledger (its sequence, read before the fleet is listed): ${(cause as Error).message}`,
      { cause },
    );
  }
}

/** A listing, when its request was sent, and the ledger's sequence read just before. */
export interface SequencedListing {
  listing: Listing;
  at: Date;
  seq: number | undefined;
}

export interface SequencedOptions {
  /**
   * The ledger's sequence, read by the caller after its call began (a run's admission reads it):
   * its listing is ordered after it, and the request need not read it again.
   */
  seq?: number | undefined;
  /** Sent as soon as the callers of this turn of the event loop have joined, not after a quiet pause. */
  prompt?: boolean;
}

/** Lists the fleet in order with the ownership ledger (src/engine/ownership.ts, the causal rule). */
export interface SequencedListings {
  /**
   * A listing whose request was sent after this call began, with the ledger's sequence read
   * after the call began and before the request was sent: the listing is later than every ledger
   * write numbered up to it. Rejects with `LedgerUnansweredError` when the sequence was not read.
   */
  sequenced(signal: AbortSignal, options?: SequencedOptions): Promise<SequencedListing>;
}

/** A worker's client, whose listings its runs share, and their sequenced listings. */
export interface SharedListings extends SequencedListings {
  readonly api: ApiClient;
}

export interface SharedListingsOptions {
  /** Reads the ownership ledger's sequence. Default: none (every sequenced listing has `seq` undefined). */
  sequence?: (() => Promise<number>) | undefined;
  /** When a request is sent (a listing's `at`), and when it is due. Default: the system's clock. */
  clock?: Clock;
}

/** A listing request goes once no other run has asked for this long… */
const QUIET_MS = 2;
/** …or this long after the first asked, whichever is sooner. */
const MAX_WAIT_MS = 25;

/** What a request brought: its listing, when it was sent, the ledger's sequence read just before, or why not. */
interface Sent {
  listing: Listing;
  at: Date;
  seq: number | undefined;
  unread?: { error: unknown };
}

/** One listing request and the callers it serves. */
interface Flight extends PromiseWithResolvers<Sent> {
  /** Callers still waiting for it: when the last stops waiting, the request is called off. */
  waiting: number;
  /** Calls the request off (shutdown: no run wants it any more, and the API may hang). */
  controller: AbortController;
  /** A caller wants the ledger's sequence, read just before the request is sent. */
  sequenced: boolean;
  /** A caller wants the request sent as soon as this turn's callers have joined. */
  prompt: boolean;
}

function newFlight(): Flight {
  return {
    ...Promise.withResolvers<Sent>(),
    waiting: 0,
    controller: new AbortController(),
    sequenced: false,
    prompt: false,
  };
}

/**
 * The client a worker's runs share, whose `listWorkgroups` calls overlapping in time share one
 * request: a burst of runs (a thousand jobs on one tick, every run of a window edge) lists the
 * fleet a few times instead of once a run, and no run waits behind the API serving the others'.
 *
 * Every caller gets a listing whose request was sent after its call began, never one already
 * under way; a `sequenced` caller also gets the ownership ledger's sequence, read once for the
 * request just before it is sent (the causal rule, src/engine/ownership.ts): a burst reads it once,
 * not once a run. Calls made while a request is under way wait for the next one, sent when it
 * ends; otherwise a request goes once no call has come for 2 ms (25 ms after the first at most).
 * A caller whose signal aborts stops waiting alone; once every caller of a request has, the
 * request is called off. Each caller's run records the shared request's ID; the call is logged
 * once, by the worker rather than a run.
 */
export function sharedListings(
  api: ApiClient,
  { sequence, clock = systemClock }: SharedListingsOptions = {},
): SharedListings {
  const requests = new ListingRequests(api, sequence, clock);

  const listWorkgroups = async (options: CallOptions = {}): Promise<Listing> => {
    options.signal?.throwIfAborted();
    const { listing } = await requests.wait(requests.join(false), options.signal);
    if (listing.requestId) callScope.getStore()?.requestIds.push(listing.requestId);
    return listing;
  };

  const sequenced = async (
    signal: AbortSignal,
    { seq: known, prompt = false }: SequencedOptions = {},
  ): Promise<SequencedListing> => {
    signal.throwIfAborted();
    const { listing, at, seq, unread } = await requests.wait(
      requests.join(known === undefined, prompt),
      signal,
    );
    if (!sequence) return { listing, at, seq: undefined };
    if (known !== undefined) return { listing, at, seq: known };
    if (unread) throw LedgerUnansweredError.of(unread.error);
    return { listing, at, seq };
  };

  return {
    api: new Proxy(api, {
      get(target, property) {
        if (property === 'listWorkgroups') return listWorkgroups;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }),
    sequenced,
  };
}

/** The listing requests of `sharedListings`: the one callers join now, the one under way, and when each goes. */
class ListingRequests {
  readonly #api: ApiClient;
  readonly #sequence: (() => Promise<number>) | undefined;
  readonly #clock: Clock;
  /** The request callers join now: not sent yet. */
  #next: Flight | undefined;
  #underWay: Flight | undefined;
  // the runs of a burst come to their listing over several turns of the event loop (each after
  // its own Redis reply): the request waits until none has come for QUIET_MS, at most MAX_WAIT_MS,
  // on one timer a request rather than one a caller
  #firstJoined = 0;
  #lastJoined = 0;
  #quiet: Timer | undefined;

  constructor(api: ApiClient, sequence: (() => Promise<number>) | undefined, clock: Clock) {
    this.#api = api;
    this.#sequence = sequence;
    this.#clock = clock;
  }

  /** The request a caller joins; `prompt`: it goes as soon as this turn's callers have joined. */
  join(sequenced: boolean, prompt = false): Flight {
    this.#lastJoined = this.#clock.monotonic();
    if (!this.#next) {
      this.#next = newFlight();
      this.#firstJoined = this.#lastJoined;
    }
    const flight = this.#next;
    flight.waiting += 1;
    if (sequenced) flight.sequenced = true;
    // while a request is under way, the next is sent when it ends
    if (this.#underWay) return flight;
    if (!this.#quiet) this.#armQuiet();
    if (prompt && !flight.prompt) {
      flight.prompt = true;
      // after the callers of this turn of the event loop: a timer would wait for everything the
      // turn goes on to do (a burst's every run building its context)
      queueMicrotask(() => {
        if (this.#next === flight && !this.#underWay) this.#send();
      });
    }
    return flight;
  }

  /** What the request brings; a caller whose `signal` aborts stops waiting alone. */
  wait(flight: Flight, signal: AbortSignal | undefined): Promise<Sent> {
    return signal
      ? abortable(flight.promise, signal, (reason) => this.#leave(flight, reason))
      : flight.promise;
  }

  #leave(flight: Flight, reason: unknown): void {
    flight.waiting -= 1;
    if (flight.waiting > 0) return;
    if (flight === this.#next) {
      this.#next = undefined;
      this.#stopQuiet();
    }
    flight.controller.abort(reason);
  }

  #dueAt(): number {
    return Math.min(this.#lastJoined + QUIET_MS, this.#firstJoined + MAX_WAIT_MS);
  }

  #armQuiet(): void {
    this.#quiet = this.#clock.setTimer(this.#dueAt() - this.#clock.monotonic(), () => this.#onQuiet());
  }

  #stopQuiet(): void {
    this.#quiet?.cancel();
    this.#quiet = undefined;
  }

  #onQuiet(): void {
    this.#quiet = undefined;
    if (this.#underWay || !this.#next) return;
    if (this.#clock.monotonic() < this.#dueAt()) this.#armQuiet();
    else this.#send();
  }

  #send(): void {
    const flight = this.#next;
    this.#next = undefined;
    this.#stopQuiet();
    if (!flight) return;
    this.#underWay = flight;
    // the request belongs to no run: the first caller's run must not log it as its own
    callScope
      .exit(() => this.#request(flight))
      .then(flight.resolve, flight.reject)
      .finally(() => {
        this.#underWay = undefined;
        this.#send();
      });
  }

  async #request(flight: Flight): Promise<Sent> {
    const { signal } = flight.controller;
    const at = new Date(this.#clock.now());
    let seq: number | undefined;
    let unread: Sent['unread'];
    if (flight.sequenced && this.#sequence) {
      try {
        seq = await abortable(this.#sequence(), signal);
      } catch (error) {
        signal.throwIfAborted();
        unread = { error };
      }
    }
    const listing = await this.#api.listWorkgroups({ signal });
    return unread ? { listing, at, seq, unread } : { listing, at, seq };
  }
}

/** A sequenced listing asked for ahead of its use, which its asker calls off when it will not use it. */
export interface ListingAhead {
  listing: Promise<SequencedListing>;
  cancel(reason?: unknown): void;
}

/** Asks `lister` for a sequenced listing now (`seq`: the ledger's sequence if read already), to be used or called off later. */
export function listAhead(lister: SequencedListings, seq: number | undefined): ListingAhead {
  const controller = new AbortController();
  const listing = lister.sequenced(controller.signal, { seq, prompt: true });
  // awaited (or called off) later: a failure meanwhile is not unhandled
  listing.catch(() => undefined);
  return {
    listing,
    cancel: (reason) => controller.abort(reason ?? new Error('the listing is no longer wanted')),
  };
}
