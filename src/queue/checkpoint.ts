import type { Redis } from 'ioredis';
import { type Logger, silentLogger } from '../log/logger.js';
import type { CheckpointStore } from '../runs/checkpoint.js';
import { type TargetRecord, TargetRecordSchema } from '../runs/summary.js';
import { DEFAULT_PREFIX, redisKeys } from './keys.js';
import { LuaScript } from './lua.js';

export interface RedisCheckpointStoreOptions {
  /** Key prefix. Default `nightshift`. */
  prefix?: string;
  /** How long a run's checkpoint outlives its last save. Default 7 days. */
  ttlMs?: number;
  /** Where a dropped corrupt record is reported. Default: nowhere. */
  log?: Logger;
}

/** Sets one target's record and refreshes the run's TTL, atomically. KEYS: hash. ARGV: field, record, TTL ms. */
const SAVE = new LuaScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

/**
 * Checkpoints shared by every worker, so a run redelivered to another worker after a crash skips
 * the targets already done. One hash per run: field = target key, value = the record as JSON.
 * The TTL is refreshed on every save, so only abandoned runs expire.
 */
export class RedisCheckpointStore implements CheckpointStore {
  readonly #redis: Redis;
  readonly #keys: ReturnType<typeof redisKeys>;
  readonly #ttlMs: number;
  readonly #log: Logger;

  constructor(redis: Redis, options: RedisCheckpointStoreOptions = {}) {
    const ttlMs = options.ttlMs ?? 7 * 24 * 3_600_000;
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
      throw new RangeError(`RedisCheckpointStore: ttlMs must be a positive integer, got ${ttlMs}`);
    }
    this.#redis = redis;
    this.#keys = redisKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#ttlMs = ttlMs;
    this.#log = options.log ?? silentLogger;
  }

  /**
   * The run's records by target key. A record that does not parse is left out, so its target is
   * simply done again, rather than the whole run failing on one bad field.
   */
  async load(runId: string): Promise<Map<string, TargetRecord>> {
    const fields = await this.#redis.hgetall(this.#keys.runTargets(runId));
    const records = new Map<string, TargetRecord>();
    for (const [key, text] of Object.entries(fields)) {
      const parsed = TargetRecordSchema.safeParse(parseJson(text));
      if (parsed.success && parsed.data.key === key) records.set(key, parsed.data);
      else this.#log.warn({ runId, target: key }, 'dropped an unreadable checkpoint record');
    }
    return records;
  }

  async save(runId: string, record: TargetRecord): Promise<void> {
    // one script call, not MULTI: on a connection BullMQ shares, ioredis copies every script
    // BullMQ registered into each pipeline it builds, which cost more than the save itself
    await SAVE.run(
      this.#redis,
      [this.#keys.runTargets(runId)],
      [record.key, JSON.stringify(record), this.#ttlMs],
    );
  }

  async clear(runId: string): Promise<void> {
    await this.#redis.del(this.#keys.runTargets(runId));
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
