import type { ApiClient } from '../api/index.js';
import { NightshiftError } from '../errors/index.js';
import type { SequencedListings } from './shared-listing.js';

/**
 * An execution that may no longer act: its lease ran out before Redis confirmed it again (Redis
 * unreachable, or this process stalled), or another execution holds it. The run is not failed:
 * the next delivery resumes it from its checkpoints.
 */
export class LeaseExpiredError extends NightshiftError {
  override name = 'LeaseExpiredError';
  readonly code = 'NS_LEASE_EXPIRED';
}

/**
 * What one execution of a run (or of a run's part) holds while it may call the API: only the
 * execution the lease names may, and it stops before the lease can expire in Redis, so no second
 * execution starts calls while this one can still make any (docs/engine.md, "The execution
 * lease"). `src/store/run-lease.ts` keeps it.
 */
export interface ExecutionLease {
  /** Throws (and aborts the execution) unless this execution may start an API call now. */
  permit(): void;
}

/**
 * The client as an execution under `lease` uses it: every operation asks the lease first, so a
 * call never starts once the execution may no longer act.
 */
export function leasedApi(api: ApiClient, lease: ExecutionLease): ApiClient {
  return new Proxy(api, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || property === 'close') return value;
      return (...args: unknown[]) => {
        try {
          lease.permit();
        } catch (error) {
          return Promise.reject(error);
        }
        return (value as (...params: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** Sequenced listings as an execution under `lease` asks for them: the lease first, as for any call. */
export function leasedListings(lister: SequencedListings, lease: ExecutionLease): SequencedListings {
  return {
    sequenced: async (signal, options) => {
      lease.permit();
      return lister.sequenced(signal, options);
    },
  };
}
