import { z } from 'zod';
import { RUN_LISTING_TTL_MS } from '../config/index.js';
import type { FleetListing, RunPart } from '../engine/index.js';
import { parseListing } from './fleet-listing.js';
import { SET_FIELDS_AND_TTL } from './lua.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';

/** The hash field holding the parts' targets (the slices are under the parts' numbers). */
const PARTS_FIELD = 'parts';
const PartKeysSchema = z.array(z.array(z.string()));

export interface RunListingsOptions extends StoreOptions {
  /** How long a stored listing outlives a run that never cleared it (its workers all died). Default 24 h. */
  ttlMs?: number;
}

/**
 * The fleet listing a split run made, kept for its parts: each part works from its own slice of
 * the run's one listing (its targets' workspaces: a part of 500 reads 500, not the fleet) instead of
 * listing the fleet itself. One hash per run, a field per part. The run clears it when its parts
 * have ended; the TTL drops one a run left behind.
 */
export class RunListings extends RedisStore {
  readonly #ttlMs: number;

  constructor(redis: RedisConnection, options: RunListingsOptions = {}) {
    super(redis, options);
    this.#ttlMs = positiveInteger('RunListings: ttlMs', options.ttlMs ?? RUN_LISTING_TTL_MS);
  }

  /** Stores each part's slice of the run's listing (`sliceListing`), and the parts' targets, in one call. */
  async save(
    runId: string,
    slices: ReadonlyMap<number, FleetListing>,
    parts: readonly RunPart[],
  ): Promise<void> {
    const fields = [...slices].flatMap(([index, slice]) => [String(index), JSON.stringify(slice)]);
    const targets = JSON.stringify(parts.map((part) => part.keys));
    await SET_FIELDS_AND_TTL.run(
      this.redis,
      [this.keys.runListing(runId)],
      [this.#ttlMs, PARTS_FIELD, targets, ...fields],
    );
  }

  /**
   * The parts an earlier execution of the run shared its targets out in, while they go (the run
   * clears them once they have all ended); undefined when it was not split or is done with them.
   */
  async parts(runId: string): Promise<RunPart[] | undefined> {
    const stored = await this.redis.hget(this.keys.runListing(runId), PARTS_FIELD);
    if (stored === null) return undefined;
    const parsed = PartKeysSchema.safeParse(JSON.parse(stored));
    return parsed.success ? parsed.data.map((keys, index) => ({ index, keys })) : undefined;
  }

  /** The part's slice, or undefined when it is gone or this version cannot read it. */
  async load(runId: string, part: RunPart): Promise<FleetListing | undefined> {
    return parseListing(await this.redis.hget(this.keys.runListing(runId), String(part.index)));
  }

  async clear(runId: string): Promise<void> {
    await this.redis.del(this.keys.runListing(runId));
  }
}
