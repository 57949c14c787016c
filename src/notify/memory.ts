import type { Redis } from 'ioredis';
import { DEFAULT_PREFIX, redisKeys } from '../store/keys.js';
import { LuaScript } from '../store/lua.js';
import { type SinkState, SinkStateSchema } from './events.js';

/** What each sink was last told about each job; see SinkState. */
export interface NotificationMemory {
  get(job: string, sink: string): Promise<SinkState | undefined>;
  /** Stores `state` unless the stored one comes from a run that finished later. */
  set(job: string, sink: string, state: SinkState): Promise<void>;
}

/** Orders two states by when their runs finished; ISO instants in UTC compare as strings. */
function isOlder(candidate: SinkState, stored: SinkState | undefined): boolean {
  return stored !== undefined && candidate.at < stored.at;
}

/** For `nightshift run --inline` and tests: forgets everything with the process. */
export class InMemoryNotificationMemory implements NotificationMemory {
  readonly #states = new Map<string, SinkState>();

  async get(job: string, sink: string): Promise<SinkState | undefined> {
    const state = this.#states.get(JSON.stringify([job, sink]));
    return state === undefined ? undefined : structuredClone(state);
  }

  async set(job: string, sink: string, state: SinkState): Promise<void> {
    const key = JSON.stringify([job, sink]);
    if (isOlder(state, this.#states.get(key))) return;
    this.#states.set(key, structuredClone(state));
  }
}

export interface RedisNotificationMemoryOptions {
  /** Key prefix, the engine's. Default `nightshift`. */
  prefix?: string;
  /**
   * A state not written for this long is dropped: a job or sink removed from the policy leaves
   * nothing behind. Every run of the job writes it again, so keep it above the longest interval
   * between two runs of a job, or that job's open findings are reported as new again. Default 90 days.
   */
  ttlMs?: number;
}

export const DEFAULT_NOTIFY_STATE_TTL_MS = 90 * 86_400_000;

/**
 * Writes the state unless the stored one is from a run that finished later, so a slow run that
 * ends after a newer one cannot roll the memory back (two runs of one job with `overlap: allow`).
 * KEYS: the state key. ARGV: state JSON, its `at`, TTL in ms. Returns 1 if written, 0 if not.
 */
const SET_IF_NOT_OLDER = new LuaScript(`
local current = redis.call('GET', KEYS[1])
if current then
  local ok, stored = pcall(cjson.decode, current)
  if ok and type(stored) == 'table' and type(stored.at) == 'string' and stored.at > ARGV[2] then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`);

/** The engine's memory, shared by every worker, under the engine's key prefix. */
export class RedisNotificationMemory implements NotificationMemory {
  readonly #redis: Redis;
  readonly #keys: ReturnType<typeof redisKeys>;
  readonly #ttlMs: number;

  constructor(redis: Redis, options: RedisNotificationMemoryOptions = {}) {
    const ttlMs = options.ttlMs ?? DEFAULT_NOTIFY_STATE_TTL_MS;
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1)
      throw new RangeError(`RedisNotificationMemory: ttlMs must be a positive integer, got ${ttlMs}`);
    this.#redis = redis;
    this.#keys = redisKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#ttlMs = ttlMs;
  }

  /** A state this version cannot read counts as none: its sink hears the run's changes afresh. */
  async get(job: string, sink: string): Promise<SinkState | undefined> {
    const text = await this.#redis.get(this.#keys.notifyState(job, sink));
    if (text === null) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined;
    }
    const parsed = SinkStateSchema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  }

  async set(job: string, sink: string, state: SinkState): Promise<void> {
    await SET_IF_NOT_OLDER.run(
      this.#redis,
      [this.#keys.notifyState(job, sink)],
      [JSON.stringify(state), state.at, this.#ttlMs],
    );
  }
}
