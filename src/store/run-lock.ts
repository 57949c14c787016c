import type { Logger } from '../log/index.js';
import { type RedisKeys, redisKeys } from './keys.js';
import { DELETE_IF_OWNER, RENEW_IF_OWNER, TAKE_RUN_LOCK } from './lua.js';
import type { RedisConnection } from './redis.js';

export interface RunLockOptions {
  prefix: string;
  /** How long a lock outlives its last renewal. */
  ttlMs: number;
  log: Logger;
}

/**
 * One run at a time per job: the lock names the run holding it, so only that run renews (with its
 * execution's lease, run-lease.ts) or releases it, and a redelivery of the same run (a takeover)
 * finds it already its own.
 */
export class RunLock {
  readonly #redis: RedisConnection;
  readonly #keys: RedisKeys;
  readonly #ttlMs: number;
  readonly #log: Logger;

  constructor(redis: RedisConnection, options: RunLockOptions) {
    this.#redis = redis;
    this.#keys = redisKeys(options.prefix);
    this.#ttlMs = options.ttlMs;
    this.#log = options.log;
  }

  /**
   * Takes the job's lock for the run, or renews it a full TTL when the run already holds it:
   * undefined then. Otherwise the run id holding it.
   */
  async take(job: string, runId: string): Promise<string | undefined> {
    const holder = (await TAKE_RUN_LOCK.run(
      this.#redis,
      [this.#keys.runLock(job)],
      [runId, this.#ttlMs],
    )) as string;
    return holder === '' ? undefined : holder;
  }

  /**
   * Keeps the lock another full TTL if the run still holds it: for a delivery of the run that
   * waits for its own earlier execution to let go of the run's lease, so no other run of the job
   * slips in meanwhile. Resolves with whether it was kept.
   */
  async extend(job: string, runId: string): Promise<boolean> {
    return (await RENEW_IF_OWNER.run(this.#redis, [this.#keys.runLock(job)], [runId, this.#ttlMs])) === 1;
  }

  /** Releases the lock if the run still holds it; a failure is logged, the lock then expires. */
  async release(job: string, runId: string): Promise<void> {
    await DELETE_IF_OWNER.run(this.#redis, [this.#keys.runLock(job)], [runId]).catch((error: unknown) =>
      this.#log.warn({ err: error }, 'could not release the run lock'),
    );
  }
}
