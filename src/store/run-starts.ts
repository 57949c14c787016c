import { RUN_START_TTL_MS } from '../config/index.js';
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
 * died keeps the run's first start and says from whom it took it. A start is recorded as the run
 * is admitted, in the same step (`RunLock.admit`): this store says where and how.
 */
export class RunStarts extends RedisStore {
  readonly #ttlMs: number;

  constructor(redis: RedisConnection, options: StoreOptions & { ttlMs?: number } = {}) {
    super(redis, options);
    this.#ttlMs = options.ttlMs ?? RUN_START_TTL_MS;
  }

  /** The hash a script records the run's start in, and its arguments: this start, this worker, the record's TTL. */
  recording(runId: string, worker: string, now: Date): { key: string; args: [string, string, number] } {
    return { key: this.keys.runStart(runId), args: [now.toISOString(), worker, this.#ttlMs] };
  }

  async clear(runId: string): Promise<void> {
    await this.redis.del(this.keys.runStart(runId));
  }
}

/** The start a script recorded (`recording`), from its reply: the run's first start and the worker before this one ('' for none). */
export function recordedStart(first: string, previous: string, now: Date): RunStart {
  const startedAt = new Date(first);
  return {
    startedAt: Number.isNaN(startedAt.getTime()) ? now : startedAt,
    previousWorker: previous === '' ? undefined : previous,
  };
}
