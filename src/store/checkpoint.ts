import { parserFor } from '../api/index.js';
import { CHECKPOINT_TTL_MS } from '../config/index.js';
import type { CheckpointStore } from '../engine/index.js';
import { type TargetRecord, TargetRecordSchema } from '../engine/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import { parseJson } from './json.js';
import { SET_FIELDS_AND_TTL } from './lua.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';

export interface RedisCheckpointStoreOptions extends StoreOptions {
  /** How long a run's checkpoint outlives its last save. Default 7 days. */
  ttlMs?: number;
  /** Where a dropped corrupt record is reported. Default: nowhere. */
  log?: Logger;
}

/** Records waiting for the run's next write, and the promise that write keeps. */
interface PendingWrite {
  readonly fields: string[];
  readonly written: Promise<void>;
}

/**
 * Checkpoints shared by every worker, so a run redelivered to another worker after a crash skips
 * the targets already done. One hash per run: field = target key, value = the record as JSON.
 * The TTL is refreshed on every save, so only abandoned runs expire. Actions' progress records
 * (see ProgressRecord) live beside it in a second hash, field = target key, under the same TTL.
 */
export class RedisCheckpointStore extends RedisStore implements CheckpointStore {
  readonly #ttlMs: number;
  readonly #log: Logger;
  /** Per run: the last write started (settled either way), and the one gathering records meanwhile. */
  readonly #writing = new Map<string, Promise<void>>();
  readonly #pending = new Map<string, PendingWrite>();

  constructor(redis: RedisConnection, options: RedisCheckpointStoreOptions = {}) {
    super(redis, options);
    this.#ttlMs = positiveInteger('RedisCheckpointStore: ttlMs', options.ttlMs ?? CHECKPOINT_TTL_MS);
    this.#log = options.log ?? silentLogger;
  }

  /**
   * The run's records by target key. A record that does not parse is left out, so its target is
   * simply done again, rather than the whole run failing on one bad field.
   */
  async load(runId: string, keys?: readonly string[]): Promise<Map<string, TargetRecord>> {
    const hash = this.keys.runTargets(runId);
    const fields: [string, string | null][] = keys
      ? keys.length === 0
        ? []
        : (await this.redis.hmget(hash, ...keys)).map((text, i) => [keys[i] as string, text])
      : Object.entries(await this.redis.hgetall(hash));
    const records = new Map<string, TargetRecord>();
    // checked by the compiled validator, not rebuilt by zod: a 10,000-target run's summary reads them all
    const parse = parserFor(TargetRecordSchema);
    for (const [key, text] of fields) {
      if (text === null) continue;
      const parsed = parse(parseJson(text));
      if (parsed.success && parsed.data.key === key) records.set(key, parsed.data);
      else this.#log.warn({ runId, target: key }, 'dropped an unreadable checkpoint record');
    }
    return records;
  }

  async count(runId: string): Promise<number> {
    return this.redis.hlen(this.keys.runTargets(runId));
  }

  /**
   * Resolves once the record is in Redis. Records saved while a write of the run is under way
   * go together in the next one (group commit): a run with 64 targets in flight makes a few
   * writes a round trip instead of one per target, and no caller returns before its record is
   * stored.
   */
  save(runId: string, record: TargetRecord): Promise<void> {
    const pending = this.#pending.get(runId);
    if (pending) {
      pending.fields.push(record.key, JSON.stringify(record));
      return pending.written;
    }
    const fields = [record.key, JSON.stringify(record)];
    // the run's previous write never rejects here: its own callers got its error
    const written = (this.#writing.get(runId) ?? Promise.resolve()).then(() => {
      this.#pending.delete(runId);
      return this.#write(runId, fields);
    });
    const settled: Promise<void> = written
      .catch(() => undefined)
      .finally(() => {
        if (this.#writing.get(runId) === settled) this.#writing.delete(runId);
      });
    this.#writing.set(runId, settled);
    this.#pending.set(runId, { fields, written });
    return written;
  }

  async #write(runId: string, fields: readonly string[]): Promise<void> {
    // one script call, not MULTI: on a connection BullMQ shares, ioredis copies every script
    // BullMQ registered into each pipeline it builds, which cost more than the save itself
    await SET_FIELDS_AND_TTL.run(this.redis, [this.keys.runTargets(runId)], [this.#ttlMs, ...fields]);
  }

  async loadProgress(runId: string, key: string): Promise<unknown> {
    const text = await this.redis.hget(this.keys.runProgress(runId), key);
    return text === null ? undefined : parseJson(text);
  }

  async saveProgress(runId: string, key: string, progress: unknown): Promise<void> {
    await SET_FIELDS_AND_TTL.run(
      this.redis,
      [this.keys.runProgress(runId)],
      [this.#ttlMs, key, JSON.stringify(progress)],
    );
  }

  async clear(runId: string): Promise<void> {
    await this.redis.del(this.keys.runTargets(runId), this.keys.runProgress(runId));
  }
}
