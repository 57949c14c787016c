import type { ApiClient, CallOptions } from '../api/index.js';
import { abortable } from './abortable.js';
import { callScope } from './call-scope.js';

type Listing = Awaited<ReturnType<ApiClient['listWorkgroups']>>;

/** A listing request goes once no other run has asked for this long… */
const QUIET_MS = 2;
/** …or this long after the first asked, whichever is sooner. */
const MAX_WAIT_MS = 25;

/** One listing request and the callers it serves. */
interface Flight extends PromiseWithResolvers<Listing> {
  /** Callers still waiting for it: when the last stops waiting, the request is called off. */
  waiting: number;
  /** Calls the request off (shutdown: no run wants it any more, and the API may hang). */
  controller: AbortController;
}

function newFlight(): Flight {
  return { ...Promise.withResolvers<Listing>(), waiting: 0, controller: new AbortController() };
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
 * goes once no call has come for 2 ms (25 ms after the first at most). A caller whose signal aborts
 * stops waiting alone; once every caller of a request has, the request is called off. Each
 * caller's run records the shared request's ID; the call is logged once, by the worker rather
 * than a run.
 */
export function sharedListings(api: ApiClient): ApiClient {
  /** The request callers join now: not sent yet. */
  let next: Flight | undefined;
  let underWay: Flight | undefined;

  const send = () => {
    const flight = next;
    next = undefined;
    if (!flight) return;
    underWay = flight;
    // the request belongs to no run: the first caller's run must not log it as its own
    callScope
      .exit(() => api.listWorkgroups({ signal: flight.controller.signal }))
      .then(flight.resolve, flight.reject)
      .finally(() => {
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

  const join = (): Flight => {
    if (!next) {
      next = newFlight();
      firstJoined = performance.now();
    }
    next.waiting += 1;
    // while a request is under way, the next is sent when it ends
    if (!underWay) sendWhenQuiet();
    return next;
  };

  const leave = (flight: Flight, reason: unknown) => {
    flight.waiting -= 1;
    if (flight.waiting > 0) return;
    if (flight === next) {
      next = undefined;
      clearTimeout(quiet);
    }
    flight.controller.abort(reason);
  };

  const listWorkgroups = async (options: CallOptions = {}): Promise<Listing> => {
    const { signal } = options;
    signal?.throwIfAborted();
    const flight = join();
    const listing = await (signal
      ? abortable(flight.promise, signal, (reason) => leave(flight, reason))
      : flight.promise);
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
