import {
  type Ownership,
  type OwnershipLedger,
  OwnershipSchema,
  type PausedInterval,
  PausedIntervalSchema,
  pausedInterval,
  type ReleaseReason,
} from '../engine/index.js';
import { parseJson } from './json.js';
import { END_OWNERSHIP } from './lua.js';
import type { RedisConnection } from './redis.js';
import { RedisStore, type StoreOptions } from './redis-store.js';

export interface RedisOwnershipLedgerOptions extends StoreOptions {
  /** How long closed paused intervals are kept for `savings`. Default 400 days. */
  intervalRetentionMs?: number;
}

/** Owned hours and estimated cost avoided so far, closed intervals only (see `openTotals`). */
export interface SavingsTotals {
  hours: number;
  /** By currency. */
  cost: Record<string, number>;
}

const HOUR_MS = 3_600_000;

/**
 * The ownership ledger in Redis: one hash of records by workspace key, a sorted set of closed
 * paused intervals (by end time) and a hash of running totals. Every write is one command or
 * script, so a crash between two never leaves a half-written record.
 */
export class RedisOwnershipLedger extends RedisStore implements OwnershipLedger {
  readonly #retentionMs: number;

  constructor(redis: RedisConnection, options: RedisOwnershipLedgerOptions = {}) {
    super(redis, options);
    this.#retentionMs = options.intervalRetentionMs ?? 400 * 86_400_000;
  }

  /** A record nobody can read is left out: its workspace is simply not owned (never resumed by mistake). */
  async all(): Promise<Map<string, Ownership>> {
    const fields = await this.redis.hgetall(this.keys.owned);
    const records = new Map<string, Ownership>();
    for (const [key, text] of Object.entries(fields)) {
      const parsed = OwnershipSchema.safeParse(parseJson(text));
      if (parsed.success && parsed.data.key === key) records.set(key, parsed.data);
    }
    return records;
  }

  async put(record: Ownership): Promise<void> {
    await this.redis.hset(this.keys.owned, record.key, JSON.stringify(OwnershipSchema.parse(record)));
  }

  async end(key: string, reason: ReleaseReason, at: Date, runId?: string): Promise<Ownership | undefined> {
    for (;;) {
      const text = await this.redis.hget(this.keys.owned, key);
      if (text === null) return undefined;
      const parsed = OwnershipSchema.safeParse(parseJson(text));
      const record = parsed.success ? parsed.data : undefined;
      if (record && runId !== undefined && record.runId !== runId) return undefined;
      const interval = record && pausedInterval(record, reason, at);
      const hours = interval ? (Date.parse(interval.to) - Date.parse(interval.from)) / HOUR_MS : 0;
      const ended = await END_OWNERSHIP.run(
        this.redis,
        [this.keys.owned, this.keys.pausedIntervals, this.keys.savingsTotals],
        [
          key,
          text,
          interval ? JSON.stringify(interval) : '',
          interval ? Date.parse(interval.to) : 0,
          hours,
          interval?.pricePerHour === undefined ? 0 : hours * interval.pricePerHour,
          interval?.currency && interval.pricePerHour !== undefined ? `cost:${interval.currency}` : '',
          at.getTime() - this.#retentionMs,
        ],
      );
      if (ended === 1) return record;
    }
  }

  /** Closed intervals that ended at or after `since`, oldest first. */
  async intervalsSince(since: Date): Promise<PausedInterval[]> {
    const members = await this.redis.zrangebyscore(this.keys.pausedIntervals, since.getTime(), '+inf');
    return members.flatMap((text) => {
      const parsed = PausedIntervalSchema.safeParse(parseJson(text));
      return parsed.success ? [parsed.data] : [];
    });
  }

  /** Hours and cost of every interval closed so far: the base of the savings counters. */
  async closedTotals(): Promise<SavingsTotals> {
    const fields = await this.redis.hgetall(this.keys.savingsTotals);
    const cost: Record<string, number> = {};
    for (const [field, value] of Object.entries(fields)) {
      if (field.startsWith('cost:')) cost[field.slice(5)] = Number(value);
    }
    return { hours: Number(fields.hours ?? 0), cost };
  }
}
