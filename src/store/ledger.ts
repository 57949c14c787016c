import {
  type EndCondition,
  type IntendOutcome,
  meets,
  type Ownership,
  type OwnershipLedger,
  OwnershipSchema,
  type PausedInterval,
  PausedIntervalSchema,
  pausedInterval,
  type ReleaseReason,
} from '../engine/index.js';
import { parseJson } from './json.js';
import { CONFIRM_OWNERSHIP, END_OWNERSHIP, INTEND_OWNERSHIP } from './lua.js';
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
    return parseRecords(await this.redis.hgetall(this.keys.owned));
  }

  async sequence(): Promise<number> {
    return Number((await this.redis.get(this.keys.ledgerSequence)) ?? 0);
  }

  async intend(record: Ownership): Promise<IntendOutcome> {
    const [written, before, after] = (await INTEND_OWNERSHIP.run(
      this.redis,
      [this.keys.owned, this.keys.pauseJournal, this.keys.ledgerSequence],
      [record.key, JSON.stringify(OwnershipSchema.parse(record)), record.owner],
    )) as [number, string, string?];
    const prior = parseRecord(before, record.key);
    if (written !== 1) {
      // a record other than this owner's intent was there; one nobody can read stops the pause too
      return { written: false, prior: prior ?? { ...record, owner: '(unreadable record)' } };
    }
    const stored = parseRecord(after ?? '', record.key);
    if (!stored) throw new Error(`the ledger wrote an intent for ${record.key} it cannot read back`);
    return { written: true, record: stored, prior };
  }

  async confirm(
    key: string,
    owner: string,
    { pausedAt, requestId }: { pausedAt: string; requestId?: string | undefined },
  ): Promise<Ownership | undefined> {
    const text = (await CONFIRM_OWNERSHIP.run(
      this.redis,
      [this.keys.owned, this.keys.pauseJournal, this.keys.ledgerSequence],
      [key, owner, pausedAt, requestId ?? ''],
    )) as string;
    return parseRecord(text, key);
  }

  async put(record: Ownership): Promise<void> {
    const text = JSON.stringify(OwnershipSchema.parse(record));
    await this.redis
      .multi()
      .hset(this.keys.owned, record.key, text)
      .hset(this.keys.pauseJournal, record.key, text)
      .exec();
  }

  async end(
    key: string,
    reason: ReleaseReason,
    at: Date,
    condition: EndCondition = {},
  ): Promise<Ownership | undefined> {
    for (;;) {
      const text = await this.redis.hget(this.keys.owned, key);
      if (text === null) return undefined;
      const record = parseRecord(text, key);
      if (record && !meets(record, condition)) return undefined;
      const interval = record && pausedInterval(record, reason, at);
      const hours = interval ? (Date.parse(interval.to) - Date.parse(interval.from)) / HOUR_MS : 0;
      const ended = await END_OWNERSHIP.run(
        this.redis,
        [this.keys.owned, this.keys.pausedIntervals, this.keys.savingsTotals, this.keys.pauseJournal],
        [
          key,
          text,
          interval ? JSON.stringify(interval) : '',
          interval ? Date.parse(interval.to) : 0,
          hours,
          interval?.pricePerHour === undefined ? 0 : hours * interval.pricePerHour,
          interval?.currency && interval.pricePerHour !== undefined ? `cost:${interval.currency}` : '',
          at.getTime() - this.#retentionMs,
          reason,
          record?.intentId ?? '',
        ],
      );
      if (ended === 1) return record;
    }
  }

  /**
   * Makes the journal's `entry` owned again, confirmed, unless the workspace has a record by now
   * (one command: nothing another writer recorded meanwhile is overwritten). Resolves with whether
   * it was adopted.
   */
  async adopt(entry: Ownership, at: Date): Promise<boolean> {
    const record: Ownership = {
      ...entry,
      state: 'confirmed',
      pausedAt: entry.pausedAt ?? entry.intendedAt,
      adoptedAt: at.toISOString(),
    };
    return (
      (await this.redis.hsetnx(this.keys.owned, entry.key, JSON.stringify(OwnershipSchema.parse(record)))) ===
      1
    );
  }

  async journal(keys?: readonly string[]): Promise<Map<string, Ownership>> {
    if (!keys) return parseRecords(await this.redis.hgetall(this.keys.pauseJournal));
    if (keys.length === 0) return new Map();
    const texts = await this.redis.hmget(this.keys.pauseJournal, ...keys);
    const entries = new Map<string, Ownership>();
    keys.forEach((key, index) => {
      const record = parseRecord(texts[index] ?? '', key);
      if (record) entries.set(key, record);
    });
    return entries;
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

/** A stored record, or undefined when there is none or it cannot be read as the record of `key`. */
function parseRecord(text: string, key: string): Ownership | undefined {
  if (text === '') return undefined;
  const parsed = OwnershipSchema.safeParse(parseJson(text));
  return parsed.success && parsed.data.key === key ? parsed.data : undefined;
}

function parseRecords(fields: Record<string, string>): Map<string, Ownership> {
  const records = new Map<string, Ownership>();
  for (const [key, text] of Object.entries(fields)) {
    const record = parseRecord(text, key);
    if (record) records.set(key, record);
  }
  return records;
}
