import { Holds } from './holds.js';
import { RedisOwnershipLedger } from './ledger.js';
import type { RedisConnection } from './redis.js';
import { RedisWindowStates } from './window-state.js';

/** The ownership ledger, holds and windows' state on one Redis connection. */
export function fleetStateStores(redis: RedisConnection, prefix: string) {
  return {
    ledger: new RedisOwnershipLedger(redis, { prefix }),
    holds: new Holds(redis, { prefix }),
    windows: new RedisWindowStates(redis, { prefix }),
  };
}

export type RedisFleetState = ReturnType<typeof fleetStateStores>;
