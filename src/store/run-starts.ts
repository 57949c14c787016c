import type { Redis } from 'ioredis';
import { DEFAULT_PREFIX, redisKeys } from './keys.js';
import { LuaScript } from './lua.js';

/**
 * Keeps a run's first start and names the worker running it now.
 * KEYS: the run's hash. ARGV: this start (ISO), this worker, TTL ms.
 * Returns { first start, the worker before this one ('' for none) }.
 */
const BEGIN = new LuaScript(`
local first = redis.call('HGET', KEYS[1], 'startedAt')
local previous = redis.call('HGET', KEYS[1], 'worker')
if not first then
  first = ARGV[1]
  redis.call('HSET', KEYS[1], 'startedAt', first)
end
redis.call('HSET', KEYS[1], 'worker', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return { first, previous or '' }
`);

/** A run's start as the worker beginning it now sees it. */
export interface RunStart {
  /** When the run first started, on whichever worker. */
  startedAt: Date;
  /** The worker that had the run before this one; undefined on its first start. */
  previousWorker: string | undefined;
}

/**
 * Who started a run and when, across deliveries: a worker that takes a run over from one that
 * died keeps the run's first start and says from whom it took it.
 */
export class RunStarts {
  readonly #redis: Redis;
  readonly #keys: ReturnType<typeof redisKeys>;
  readonly #ttlMs: number;

  constructor(redis: Redis, options: { prefix?: string; ttlMs?: number } = {}) {
    this.#redis = redis;
    this.#keys = redisKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#ttlMs = options.ttlMs ?? 7 * 86_400_000;
  }

  async begin(runId: string, worker: string, now: Date): Promise<RunStart> {
    const [first, previous] = (await BEGIN.run(
      this.#redis,
      [this.#keys.runStart(runId)],
      [now.toISOString(), worker, this.#ttlMs],
    )) as [string, string];
    const startedAt = new Date(first);
    return {
      startedAt: Number.isNaN(startedAt.getTime()) ? now : startedAt,
      previousWorker: previous === '' ? undefined : previous,
    };
  }

  async clear(runId: string): Promise<void> {
    await this.#redis.del(this.#keys.runStart(runId));
  }
}
