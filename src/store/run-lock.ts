import type { Logger } from '../log/index.js';
import { type RedisKeys, redisKeys } from './keys.js';
import { DELETE_IF_OWNER, RENEW_IF_OWNER } from './lua.js';
import type { RedisConnection } from './redis.js';

/** A run's hold on its job's lock while it executes. */
export interface RunLockHold {
  /**
   * Whether the run still holds the lock: asked of Redis when the last confirmation is older than
   * the renewal interval (a worker stalled longer may have lost the lock), else known.
   */
  confirm(): Promise<boolean>;
  /** Stops renewing. */
  stop(): void;
}

export interface RunLockOptions {
  prefix: string;
  /** How long a lock outlives its last renewal. */
  ttlMs: number;
  log: Logger;
}

/**
 * One run at a time per job: the lock names the run holding it, so only that run renews or
 * releases it, and a redelivery of the same run (a takeover) finds it already its own.
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
   * Takes the job's lock for the run, or confirms the run already holds it: undefined then.
   * Otherwise the run id holding it ('' if it was released meanwhile: still a clash).
   */
  async take(job: string, runId: string): Promise<string | undefined> {
    const key = this.#keys.runLock(job);
    const taken = await this.#redis.set(key, runId, 'PX', this.#ttlMs, 'NX');
    if (taken === 'OK') return undefined;
    const holder = (await this.#redis.get(key)) ?? '';
    return holder === runId ? undefined : holder;
  }

  /**
   * Renews the lock every `everyMs` while the run holds it. A lock found gone (it expired while
   * this worker was stalled) is taken back if no other run took it; one another run holds is
   * lost: `onLost` is told which run holds it, once, and renewing stops. A Redis that does not
   * answer proves nothing: no other worker can take the lock from it either.
   */
  keep(job: string, runId: string, everyMs: number, onLost: (holder: string) => void): RunLockHold {
    let confirmedAt = Date.now();
    let lost = false;
    const check = async (): Promise<boolean> => {
      if (lost) return false;
      const renewed = await this.#renew(job, runId);
      const holder = renewed === false ? await this.take(job, runId).catch(() => undefined) : undefined;
      if (lost) return false;
      if (holder === undefined) {
        confirmedAt = Date.now();
        return true;
      }
      lost = true;
      clearInterval(timer);
      onLost(holder);
      return false;
    };
    const timer = setInterval(() => void check(), everyMs);
    return {
      confirm: () =>
        lost ? Promise.resolve(false) : Date.now() - confirmedAt < everyMs ? Promise.resolve(true) : check(),
      stop: () => clearInterval(timer),
    };
  }

  /** Releases the lock if the run still holds it; a failure is logged, the lock then expires. */
  async release(job: string, runId: string): Promise<void> {
    await DELETE_IF_OWNER.run(this.#redis, [this.#keys.runLock(job)], [runId]).catch((error: unknown) =>
      this.#log.warn({ err: error }, 'could not release the run lock'),
    );
  }

  /** True when renewed, false when the lock is not the run's, undefined when Redis did not answer. */
  async #renew(job: string, runId: string): Promise<boolean | undefined> {
    try {
      return (await RENEW_IF_OWNER.run(this.#redis, [this.#keys.runLock(job)], [runId, this.#ttlMs])) === 1;
    } catch (error) {
      this.#log.warn({ err: error }, 'could not renew the run lock');
      return undefined;
    }
  }
}
