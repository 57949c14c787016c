import { createHash } from 'node:crypto';
import { FLEET_LISTING_REFRESH_MS } from '../config/index.js';
import { type FleetListing, FleetListingSchema, type FleetListingSink } from '../engine/index.js';
import { parseJson } from './json.js';
import { SAVE_LISTING_IF_NEWER } from './lua.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';

export interface FleetListingsOptions extends StoreOptions {
  /**
   * How old a kept listing may grow before a run that saw the same fleet writes it again (to
   * refresh its age). Default 5 minutes.
   */
  refreshMs?: number;
}

/**
 * The newest fleet listing any run saw, for readers that must not call the API (the console).
 * One hash: `at` alone is cheap to read, so a reader keeps the parsed body and reads it again
 * only when `latestAt` changed.
 *
 * A listing is megabytes at 10,000 workspaces, and windows list the fleet every few minutes: a
 * run that saw exactly the fleet already kept (same digest) writes nothing unless the kept one is
 * older than `refreshMs`. A quiet reconciliation stays free of writes, and an append-only Redis
 * does not log megabytes a minute of the same fleet.
 */
export class RedisFleetListings extends RedisStore implements FleetListingSink {
  readonly #refreshMs: number;

  constructor(redis: RedisConnection, options: FleetListingsOptions = {}) {
    super(redis, options);
    this.#refreshMs = positiveInteger(
      'RedisFleetListings: refreshMs',
      options.refreshMs ?? FLEET_LISTING_REFRESH_MS,
    );
  }

  /** Keeps `listing` unless a listing made later is kept, or the same fleet was kept recently. */
  async save(listing: FleetListing): Promise<void> {
    const digest = createHash('sha256').update(JSON.stringify(listing.workgroups)).digest('base64url');
    const [keptAt, keptDigest] = await this.redis.hmget(this.keys.fleetListing, 'at', 'digest');
    if (keptDigest === digest && keptAt && Date.parse(listing.at) - Date.parse(keptAt) < this.#refreshMs)
      return;
    await SAVE_LISTING_IF_NEWER.run(
      this.redis,
      [this.keys.fleetListing],
      [listing.at, JSON.stringify(listing), digest],
    );
  }

  /** When the kept listing was made (ISO), or undefined when no run has listed the fleet. */
  async latestAt(): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.fleetListing, 'at')) ?? undefined;
  }

  /** The kept listing, or undefined when there is none or this version cannot read it. */
  async latest(): Promise<FleetListing | undefined> {
    return parseListing(await this.redis.hget(this.keys.fleetListing, 'body'));
  }
}

/** A kept listing's body, or undefined when there is none or this version cannot read it. */
export function parseListing(body: string | null): FleetListing | undefined {
  if (body === null) return undefined;
  const parsed = FleetListingSchema.safeParse(parseJson(body));
  return parsed.success ? parsed.data : undefined;
}
