import type { ApiClient, CallOptions } from '../api/index.js';
import { callScope } from './call-scope.js';

type Listing = Awaited<ReturnType<ApiClient['listWorkgroups']>>;

/** A listing request goes once no other run has asked for this long… */
const QUIET_MS = 2;
/** …or this long after the first asked, whichever is sooner. */
const MAX_WAIT_MS = 25;

/** Callers waiting for the next listing, which no request has been sent for yet. */
interface NextListing {
  promise: Promise<Listing>;
  resolve: (listing: Listing) => void;
  reject: (error: unknown) => void;
}

/**
 * The client a worker's runs share, whose `listWorkgroups` calls overlapping in time share one
 * request: a burst of runs (a thousand jobs on one tick, every run of a window edge) lists the
 * fleet a few times instead of once a run, and no run waits behind the API serving the others'.
 *
 * Every caller gets a listing whose request was sent after its call began, never one already
 * under way: a run that read the ownership ledger's sequence before listing can still order the
 * listing after every write numbered up to it (the causal rule, src/engine/ownership.ts). Calls
 * made while a request is under way wait for the next one, sent when it ends; otherwise a request
 * goes once no call has come for 2 ms (25 ms after the first at most). Each caller's run records
 * the shared request's ID; the call is logged once, by the worker rather than a run.
 */
export function sharedListings(api: ApiClient): ApiClient {
  let next: NextListing | undefined;
  let underWay: Promise<unknown> | undefined;

  const send = () => {
    const taking = next;
    next = undefined;
    if (!taking) return;
    // the request belongs to no run: the first caller's run must not log it as its own
    const request = callScope.exit(() => api.listWorkgroups());
    underWay = request;
    request.then(taking.resolve, taking.reject).finally(() => {
      underWay = undefined;
      send();
    });
  };

  // the runs of a burst come to their listing over several turns of the event loop (each after
  // its own Redis reply): the request waits until none has come for QUIET_MS, at most MAX_WAIT_MS
  let firstJoined = 0;
  let quiet: NodeJS.Timeout | undefined;
  const sendWhenQuiet = () => {
    clearTimeout(quiet);
    const wait = Math.min(QUIET_MS, firstJoined + MAX_WAIT_MS - performance.now());
    quiet = setTimeout(() => underWay ?? send(), Math.max(0, wait));
  };

  const join = (): Promise<Listing> => {
    if (!next) {
      let resolve!: (listing: Listing) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<Listing>((ok, fail) => {
        resolve = ok;
        reject = fail;
      });
      next = { promise, resolve, reject };
      firstJoined = performance.now();
    }
    // while a request is under way, the next is sent when it ends
    if (!underWay) sendWhenQuiet();
    return next.promise;
  };

  const listWorkgroups = async (options: CallOptions = {}): Promise<Listing> => {
    options.signal?.throwIfAborted();
    const listing = await (options.signal ? abortable(join(), options.signal) : join());
    if (listing.requestId) callScope.getStore()?.requestIds.push(listing.requestId);
    return listing;
  };

  return new Proxy(api, {
    get(target, property) {
      if (property === 'listWorkgroups') return listWorkgroups;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** `promise`, or the signal's reason once it aborts: the shared request goes on for the others. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
