import { parserFor } from '../api/index.js';
import { CHECKPOINT_TTL_MS } from '../config/index.js';
import type { CheckpointStore } from '../engine/index.js';
import { type TargetRecord, TargetRecordSchema } from '../engine/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import { flushTurnOf, GroupCommit } from './group-commit.js';
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

/** A record as its run's hash field holds it: the target key, and the record as JSON. */
type StoredRecord = readonly [key: string, text: string];

/**
 * Checkpoints shared by every worker, so a run redelivered to another worker after a crash skips
 * the targets already done. One hash per run: field = target key, value = the record as JSON.
 * The TTL is refreshed on every save, so only abandoned runs expire. Actions' progress records
 * (see ProgressRecord) live beside it in a second hash, field = target key, under the same TTL.
 */
export class RedisCheckpointStore extends RedisStore implements CheckpointStore {
  readonly #ttlMs: number;
  readonly #log: Logger;
  /** Per run with a write under way or records waiting: its group commit. */
  readonly #commits = new Map<string, GroupCommit<StoredRecord, undefined>>();

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
    let commit = this.#commits.get(runId);
    if (!commit) {
      const created = new GroupCommit((records: readonly StoredRecord[]) => this.#write(runId, records), {
        turn: flushTurnOf(this.redis),
        onIdle: () => {
          if (this.#commits.get(runId) === created) this.#commits.delete(runId);
        },
      });
      this.#commits.set(runId, created);
      commit = created;
    }
    // written as it is now: the caller may go on changing its object before the write leaves
    return commit.submit([record.key, JSON.stringify(record)]);
  }

  async #write(runId: string, records: readonly StoredRecord[]): Promise<undefined[]> {
    // one script call, not MULTI: on a connection BullMQ shares, ioredis copies every script
    // BullMQ registered into each pipeline it builds, which cost more than the save itself
    await SET_FIELDS_AND_TTL.run(this.redis, [this.keys.runTargets(runId)], [this.#ttlMs, ...records.flat()]);
    return records.map(() => undefined);
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
