import { type FleetListing, FleetListingSchema, type FleetListingSink } from '../engine/index.js';
import { parseJson } from './json.js';
import { SAVE_LISTING_IF_NEWER } from './lua.js';
import { RedisStore } from './redis-store.js';

/**
 * The newest fleet listing any run saw, for readers that must not call the API (the console).
 * One hash: `at` alone is cheap to read, so a reader keeps the parsed body and reads it again
 * only when `latestAt` changed.
 */
export class RedisFleetListings extends RedisStore implements FleetListingSink {
  /** Keeps `listing` unless a listing made later is already kept. */
  async save(listing: FleetListing): Promise<void> {
    await SAVE_LISTING_IF_NEWER.run(
      this.redis,
      [this.keys.fleetListing],
      [listing.at, JSON.stringify(listing)],
    );
  }

  /** When the kept listing was made (ISO), or undefined when no run has listed the fleet. */
  async latestAt(): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.fleetListing, 'at')) ?? undefined;
  }

  /** The kept listing, or undefined when there is none or this version cannot read it. */
  async latest(): Promise<FleetListing | undefined> {
    const body = await this.redis.hget(this.keys.fleetListing, 'body');
    if (body === null) return undefined;
    const parsed = FleetListingSchema.safeParse(parseJson(body));
    return parsed.success ? parsed.data : undefined;
  }
}
