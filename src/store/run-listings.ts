import type { FleetListing } from '../engine/index.js';
import { parseListing } from './fleet-listing.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';

export interface RunListingsOptions extends StoreOptions {
  /** How long a stored listing outlives a run that never cleared it (its workers all died). Default 24 h. */
  ttlMs?: number;
}

/**
 * The fleet listing a split run made, kept for its parts: every part works from the run's one
 * listing instead of listing the fleet itself. The run clears it when its parts have ended; the
 * TTL drops one a run left behind.
 */
export class RunListings extends RedisStore {
  readonly #ttlMs: number;

  constructor(redis: RedisConnection, options: RunListingsOptions = {}) {
    super(redis, options);
    this.#ttlMs = positiveInteger('RunListings: ttlMs', options.ttlMs ?? 24 * 3600_000);
  }

  async save(runId: string, listing: FleetListing): Promise<void> {
    await this.redis.set(this.keys.runListing(runId), JSON.stringify(listing), 'PX', this.#ttlMs);
  }

  /** The run's listing, or undefined when it is gone or this version cannot read it. */
  async load(runId: string): Promise<FleetListing | undefined> {
    return parseListing(await this.redis.get(this.keys.runListing(runId)));
  }

  async clear(runId: string): Promise<void> {
    await this.redis.del(this.keys.runListing(runId));
  }
}
