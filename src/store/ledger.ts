import { PAUSED_INTERVAL_RETENTION_MS } from '../config/index.js';
import {
  type Confirmation,
  confirmedRecord,
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
import { flushTurnOf, GroupCommit } from './group-commit.js';
import { parseJson } from './json.js';
import { CONFIRM_OWNERSHIP, END_OWNERSHIP, INTEND_OWNERSHIP } from './ledger-scripts.js';
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

/** A confirmation on its way to Redis. */
interface PendingConfirmation {
  key: string;
  owner: string;
  confirmation: Confirmation;
}

/** An end on its way to Redis: the record as the caller has it, or the text it was read as. */
interface PendingEnd {
  key: string;
  /** With an `intentId`: ended if the stored record is the same intent in the same state. */
  record: Ownership | undefined;
  /** Without one (a record of an older version, or unreadable): ended if stored as this text. */
  text: string;
  reason: ReleaseReason;
  at: Date;
}

/**
 * The ownership ledger in Redis: one hash of records by workspace key, a sorted set of closed
 * paused intervals (by end time) and a hash of running totals. Every write is one command or
 * script, so a crash between two never leaves a half-written record.
 */
export class RedisOwnershipLedger extends RedisStore implements OwnershipLedger {
  readonly #retentionMs: number;
  // every pause of a run writes an intent before its call and a confirmation after it: written
  // together, many targets' intents cost one round trip, not one each; and with the checkpoints
  // written over the same connection, one write
  readonly #intents = new GroupCommit((records: readonly Ownership[]) => this.#writeIntents(records), {
    turn: flushTurnOf(this.redis),
  });
  readonly #ends = new GroupCommit((ends: readonly PendingEnd[]) => this.#writeEnds(ends), {
    turn: flushTurnOf(this.redis),
  });
  readonly #confirmations = new GroupCommit(
    (confirmations: readonly PendingConfirmation[]) => this.#writeConfirmations(confirmations),
    { turn: flushTurnOf(this.redis) },
  );

  constructor(redis: RedisConnection, options: RedisOwnershipLedgerOptions = {}) {
    super(redis, options);
    this.#retentionMs = options.intervalRetentionMs ?? PAUSED_INTERVAL_RETENTION_MS;
  }

  /** A record nobody can read is left out: its workspace is simply not owned (never resumed by mistake). */
  async all(): Promise<Map<string, Ownership>> {
    return parseRecords(await this.redis.hgetall(this.keys.owned));
  }

  async some(keys: readonly string[]): Promise<Map<string, Ownership>> {
    return this.#read(this.keys.owned, keys);
  }

  async sequence(): Promise<number> {
    return Number((await this.redis.get(this.keys.ledgerSequence)) ?? 0);
  }

  /** An intent waits for the ledger's writes already under way, then goes with every intent that came meanwhile. */
  async intend(record: Ownership): Promise<IntendOutcome> {
    return this.#intents.submit(record);
  }

  confirm(key: string, owner: string, confirmation: Confirmation): Promise<Ownership | undefined> {
    return this.#confirmations.submit({ key, owner, confirmation });
  }

  async #writeIntents(records: readonly Ownership[]): Promise<IntendOutcome[]> {
    const replies = (await INTEND_OWNERSHIP.run(
      this.redis,
      [this.keys.owned, this.keys.pauseJournal, this.keys.ledgerSequence],
      records.flatMap((record) => [record.key, JSON.stringify(record), record.owner]),
    )) as [number, string, number?][];
    return replies.map(([written, before, intentSeq], index) => {
      const record = records[index] as Ownership;
      const prior = parseRecord(before, record.key);
      // a record other than this owner's intent was there; one nobody can read stops the pause too
      if (written !== 1)
        return { written: false, prior: prior ?? { ...record, owner: '(unreadable record)' } };
      // what was stored is the intent as given with its number: reading it back cost a parse a pause
      return { written: true, record: { ...record, intentSeq }, prior };
    });
  }

  async #writeConfirmations(
    confirmations: readonly PendingConfirmation[],
  ): Promise<(Ownership | undefined)[]> {
    const replies = (await CONFIRM_OWNERSHIP.run(
      this.redis,
      [this.keys.owned, this.keys.pauseJournal, this.keys.ledgerSequence],
      confirmations.flatMap(({ key, owner, confirmation }) => [
        key,
        owner,
        confirmation.pausedAt,
        confirmation.requestId ?? '',
        confirmation.intent?.intentId ?? '',
      ]),
    )) as [number, string][];
    return replies.map(([confirmSeq, text], index) => {
      const { key, confirmation } = confirmations[index] as PendingConfirmation;
      if (confirmSeq === 0) return undefined;
      // the stored record was the caller's intent: confirmed as the script confirmed it
      if (text === '' && confirmation.intent)
        return confirmedRecord(confirmation.intent, confirmation, confirmSeq);
      return parseRecord(text, key);
    });
  }

  async put(record: Ownership): Promise<void> {
    const text = JSON.stringify(OwnershipSchema.parse(record));
    await this.redis
      .multi()
      .hset(this.keys.owned, record.key, text)
      .hset(this.keys.pauseJournal, record.key, text)
      .exec();
  }

  /**
   * A record the caller already has (`condition.record`, one with an `intentId`) is ended without
   * reading it first, if the stored one is still it; ends of many workspaces then go to Redis
   * together. Otherwise, or when it changed meanwhile, the record is read and decided afresh.
   */
  async end(
    key: string,
    reason: ReleaseReason,
    at: Date,
    condition: EndCondition = {},
  ): Promise<Ownership | undefined> {
    let known = condition.record?.intentId === undefined ? undefined : condition.record;
    for (;;) {
      let text = '';
      if (!known) {
        const stored = await this.redis.hget(this.keys.owned, key);
        if (stored === null) return undefined;
        text = stored;
        known = parseRecord(stored, key);
      }
      if (known && !meets(known, condition)) return undefined;
      if (await this.#ends.submit({ key, record: known, text, reason, at })) return known;
      known = undefined;
    }
  }

  async #writeEnds(ends: readonly PendingEnd[]): Promise<boolean[]> {
    const replies = (await END_OWNERSHIP.run(
      this.redis,
      [this.keys.owned, this.keys.pausedIntervals, this.keys.savingsTotals, this.keys.pauseJournal],
      ends.flatMap(({ key, record, text, reason, at }) => {
        const interval = record && pausedInterval(record, reason, at);
        const hours = interval ? (Date.parse(interval.to) - Date.parse(interval.from)) / HOUR_MS : 0;
        return [
          key,
          record?.intentId ?? '',
          record?.state ?? '',
          text,
          interval ? JSON.stringify(interval) : '',
          interval ? Date.parse(interval.to) : 0,
          hours,
          interval?.pricePerHour === undefined ? 0 : hours * interval.pricePerHour,
          interval?.currency && interval.pricePerHour !== undefined ? `cost:${interval.currency}` : '',
          at.getTime() - this.#retentionMs,
          reason,
        ];
      }),
    )) as number[];
    return replies.map((ended) => ended === 1);
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
    return keys
      ? this.#read(this.keys.pauseJournal, keys)
      : parseRecords(await this.redis.hgetall(this.keys.pauseJournal));
  }

  /** The records of `keys` in `hash` that exist and can be read. */
  async #read(hash: string, keys: readonly string[]): Promise<Map<string, Ownership>> {
    if (keys.length === 0) return new Map();
    const texts = await this.redis.hmget(hash, ...keys);
    const records = new Map<string, Ownership>();
    keys.forEach((key, index) => {
      const record = parseRecord(texts[index] ?? '', key);
      if (record) records.set(key, record);
    });
    return records;
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
