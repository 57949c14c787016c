import {
  type Confirmation,
  confirmedRecord,
  type EndCondition,
  type IntendOutcome,
  journalEndsWith,
  meets,
  type Ownership,
  type OwnershipLedger,
  type PausedInterval,
  pausedInterval,
  type ReleaseReason,
} from './ownership.js';

/**
 * An in-process ledger with the Redis ledger's rules (test/unit/engine/ledger-contract.test.ts
 * holds the two to one behaviour): for tests, and for runs that share one process with their
 * readers.
 */
export class MemoryOwnershipLedger implements OwnershipLedger {
  readonly records = new Map<string, Ownership>();
  readonly intervals: PausedInterval[] = [];
  readonly journalEntries = new Map<string, Ownership>();
  #sequence = 0;

  async all(): Promise<Map<string, Ownership>> {
    return new Map(this.records);
  }

  async some(keys: readonly string[]): Promise<Map<string, Ownership>> {
    return pick(this.records, keys);
  }

  async sequence(): Promise<number> {
    return this.#sequence;
  }

  async intend(record: Ownership): Promise<IntendOutcome> {
    const existing = this.records.get(record.key);
    if (existing && (existing.owner !== record.owner || existing.state !== 'intent'))
      return { written: false, prior: existing };
    const written: Ownership = { ...record, intentSeq: ++this.#sequence };
    this.records.set(record.key, written);
    this.journalEntries.set(record.key, written);
    return { written: true, record: written, prior: existing };
  }

  async confirm(key: string, owner: string, confirmation: Confirmation): Promise<Ownership | undefined> {
    const existing = this.records.get(key);
    if (!existing || existing.owner !== owner || existing.state !== 'intent') return undefined;
    const confirmed = confirmedRecord(existing, confirmation, ++this.#sequence);
    this.records.set(key, confirmed);
    this.journalEntries.set(key, confirmed);
    return confirmed;
  }

  async end(
    key: string,
    reason: ReleaseReason,
    at: Date,
    condition: EndCondition = {},
  ): Promise<Ownership | undefined> {
    const record = this.records.get(key);
    if (!record || !meets(record, condition)) return undefined;
    this.records.delete(key);
    if (journalEndsWith(this.journalEntries.get(key), record, reason)) this.journalEntries.delete(key);
    const interval = pausedInterval(record, reason, at);
    if (interval) this.intervals.push(interval);
    return record;
  }

  async put(record: Ownership): Promise<void> {
    this.records.set(record.key, record);
  }

  async journal(keys?: readonly string[]): Promise<Map<string, Ownership>> {
    return keys ? pick(this.journalEntries, keys) : new Map(this.journalEntries);
  }
}

function pick(records: ReadonlyMap<string, Ownership>, keys: readonly string[]): Map<string, Ownership> {
  return new Map(
    keys.flatMap((key) => {
      const record = records.get(key);
      return record ? [[key, record] as const] : [];
    }),
  );
}
