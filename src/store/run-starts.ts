import { BEGIN_RUN } from './lua.js';
import type { RedisConnection } from './redis.js';
import { RedisStore, type StoreOptions } from './redis-store.js';

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
export class RunStarts extends RedisStore {
  readonly #ttlMs: number;

  constructor(redis: RedisConnection, options: StoreOptions & { ttlMs?: number } = {}) {
    super(redis, options);
    this.#ttlMs = options.ttlMs ?? 7 * 86_400_000;
  }

  async begin(runId: string, worker: string, now: Date): Promise<RunStart> {
    const [first, previous] = (await BEGIN_RUN.run(
      this.redis,
      [this.keys.runStart(runId)],
      [now.toISOString(), worker, this.#ttlMs],
    )) as [string, string];
    const startedAt = new Date(first);
    return {
      startedAt: Number.isNaN(startedAt.getTime()) ? now : startedAt,
      previousWorker: previous === '' ? undefined : previous,
    };
  }

  async clear(runId: string): Promise<void> {
    await this.redis.del(this.keys.runStart(runId));
  }
}
