import { NOTIFY_STATE_TTL_MS } from '../config/index.js';
import { parseJson } from './json.js';
import { SET_IF_NOT_OLDER } from './lua.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';

export interface NotifyStatesOptions extends StoreOptions {
  /**
   * A state not written for this long is dropped: a job or sink removed from the policy leaves
   * nothing behind. Every run of the job writes it again, so keep it above the longest interval
   * between two runs of a job, or that job's open findings are reported as new again. Default 90 days.
   */
  ttlMs?: number;
}

/**
 * What each notification sink was last told about each job, shared by every worker: one JSON
 * value per job and sink, stamped with `at` (when its run finished, ISO in UTC). The notifier
 * owns the value's shape; this store keeps the newest.
 */
export class NotifyStates extends RedisStore {
  readonly #ttlMs: number;

  constructor(redis: RedisConnection, options: NotifyStatesOptions = {}) {
    super(redis, options);
    this.#ttlMs = positiveInteger('NotifyStates: ttlMs', options.ttlMs ?? NOTIFY_STATE_TTL_MS);
  }

  /** The stored value, parsed; undefined when there is none or it is not JSON. */
  async get(job: string, sink: string): Promise<unknown> {
    const text = await this.redis.get(this.keys.notifyState(job, sink));
    return text === null ? undefined : parseJson(text);
  }

  /**
   * Stores `state` unless the stored one is from a run that finished later, so a slow run that
   * ends after a newer one cannot roll the state back. True if it was written.
   */
  async setUnlessOlder(job: string, sink: string, state: { readonly at: string }): Promise<boolean> {
    const written = await SET_IF_NOT_OLDER.run(
      this.redis,
      [this.keys.notifyState(job, sink)],
      [JSON.stringify(state), state.at, this.#ttlMs],
    );
    return written === 1;
  }
}
