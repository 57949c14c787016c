import type { Logger } from '../log/index.js';
import { type RedisKeys, redisKeys } from './keys.js';
import { ADMIT_RUN, DELETE_IF_OWNER, RENEW_IF_OWNER } from './lua.js';
import type { RedisConnection } from './redis.js';
import { type RunStart, type RunStarts, recordedStart } from './run-starts.js';
import { parseSuspension, type Suspension, suspendsAt } from './suspensions.js';

/** What `admit` found: the job suspended, its lock another run's, or the run free to start. */
export type LockAdmission =
  | { verdict: 'suspended'; suspension: Suspension }
  | { verdict: 'locked'; holder: string }
  | {
      verdict: 'admitted';
      start?: RunStart;
      /** The ownership ledger's sequence as the run was admitted (not read when nothing was checked). */
      seq?: number;
    };

export interface RunLockOptions {
  prefix: string;
  /** How long a lock outlives its last renewal. */
  ttlMs: number;
  log: Logger;
  /** Where an admitted run's start is recorded, in the same step (`admit`'s `start`). Default: not recorded. */
  starts?: RunStarts | undefined;
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
  readonly #starts: RunStarts | undefined;

  constructor(redis: RedisConnection, options: RunLockOptions) {
    this.#redis = redis;
    this.#keys = redisKeys(options.prefix);
    this.#ttlMs = options.ttlMs;
    this.#log = options.log;
    this.#starts = options.starts;
  }

  /**
   * Admits a run in one round trip: not while its job is suspended (`checkSuspension`: by a
   * suspension that covers `suspendedAt`, the run's tick, else its start), then, when
   * `exclusive`, takes the job's lock for the run, or renews it a full TTL when the run already
   * holds it; and records the admitted run's `start` (this worker, now) when the lock has a
   * `starts` store, returning the run's first start; an admitted run is told the ownership
   * ledger's sequence as of its admission. A burst of a thousand runs at one tick so passes one
   * Redis reply, not four.
   */
  async admit(
    job: string,
    runId: string,
    {
      exclusive,
      checkSuspension,
      start,
      suspendedAt,
    }: {
      exclusive: boolean;
      checkSuspension: boolean;
      start?: { worker: string; at: Date } | undefined;
      suspendedAt?: number | undefined;
    },
  ): Promise<LockAdmission> {
    const recording = start && this.#starts?.recording(runId, start.worker, start.at);
    if (!exclusive && !checkSuspension && !recording) return { verdict: 'admitted' };
    const [verdict, found, seq, first, previous] = (await ADMIT_RUN.run(
      this.#redis,
      [
        this.#keys.suspended,
        this.#keys.runLock(job),
        this.#keys.ledgerSequence,
        ...(recording ? [recording.key] : []),
      ],
      [
        job,
        checkSuspension ? '1' : '0',
        exclusive ? '1' : '0',
        runId,
        this.#ttlMs,
        ...(recording ? recording.args : []),
      ],
    )) as [string, string, string?, string?, string?];
    if (verdict === 'suspended') {
      const suspension = parseSuspension(job, found);
      const at = suspendedAt ?? start?.at.getTime();
      if (at === undefined || suspendsAt(suspension, at)) return { verdict, suspension };
      // ended before the run's instant: admitted as if never suspended (nothing was written)
      return this.admit(job, runId, { exclusive, checkSuspension: false, start });
    }
    if (verdict === 'locked') return { verdict, holder: found };
    const admitted = { verdict: 'admitted' as const, seq: Number(seq) };
    if (!start || first === undefined) return admitted;
    return { ...admitted, start: recordedStart(first, previous ?? '', start.at) };
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
