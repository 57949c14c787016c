import { type Cancellation, LeaseExpiredError, RunCancelledError } from '../engine/index.js';
import type { Logger } from '../log/index.js';
import type { Clock, Timer } from '../time/index.js';
import { readCancellation } from './cancellations.js';
import { DELETE_IF_OWNER, RENEW_LEASE } from './lua.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';

export interface RunLeasesOptions extends StoreOptions {
  /** How long a lease outlives its last renewal in Redis. */
  ttlMs: number;
  /** How long the job's run lock outlives its last renewal (the lease renews it too). */
  lockTtlMs: number;
  log: Logger;
}

/** The job's run lock, once the run holds it: renewed with the lease. */
interface GuardedLock {
  job: string;
  runId: string;
  /** Why the execution stops when another run took the lock (the run it names). */
  lost: (holder: string) => Error;
}

/** What a renewal found: whether the lease is still the execution's, who took the lock if someone did, and whether the run was cancelled. */
interface Renewal {
  lease: boolean;
  lockTakenBy: string | undefined;
  cancellation: Cancellation | undefined;
}

/**
 * The execution leases (`lease:<run or part id>`): one execution of a run or part at a time may
 * call the API for it. An execution takes the lease when it starts (SET NX), renews it every third
 * of its TTL, and stops acting at its deadline: the send time of its last confirmed renewal plus
 * the TTL, less a tenth of it, by its own monotonic clock. A renewal is sent before Redis sets the
 * key's new expiry, so the key outlives the deadline; another execution can take the key only
 * once it has expired or been released, by which time this one has stopped (docs/engine.md).
 */
export class RunLeases extends RedisStore {
  readonly #ttlMs: number;
  readonly #lockTtlMs: number;
  readonly #log: Logger;

  constructor(redis: RedisConnection, options: RunLeasesOptions) {
    super(redis, options);
    this.#ttlMs = positiveInteger('RunLeases: ttlMs', options.ttlMs);
    this.#lockTtlMs = positiveInteger('RunLeases: lockTtlMs', options.lockTtlMs);
    this.#log = options.log;
  }

  /**
   * Takes the lease of `unit` (a run or a part of run `runId`) for the execution `token` and starts
   * renewing it; or, when another execution holds it, says how long until it expires unless
   * renewed. A run already cancelled gets its lease with `halt` aborted.
   */
  async acquire(unit: string, token: string, runId = unit): Promise<ExecutionLease | { heldForMs: number }> {
    const key = this.keys.runLease(unit);
    const cancelKey = this.keys.runCancel(runId);
    const sentAt = this.clock.monotonic();
    const [taken, cancel] = await Promise.all([
      this.redis.set(key, token, 'PX', this.#ttlMs, 'NX'),
      this.redis.get(cancelKey),
    ]);
    if (taken !== 'OK') {
      const left = await this.redis.pttl(key);
      return { heldForMs: Math.max(left, 0) };
    }
    return new ExecutionLease({
      unit,
      token,
      sentAt,
      ttlMs: this.#ttlMs,
      clock: this.clock,
      cancellation: readCancellation(cancel),
      renew: (lock) => this.#renew([key, lock ? this.keys.runLock(lock.job) : key, cancelKey], token, lock),
    });
  }

  /** Stops renewing the lease and releases it if it is still this execution's; a failure is logged, the lease then expires. */
  async release(lease: ExecutionLease): Promise<void> {
    lease.stop();
    await DELETE_IF_OWNER.run(this.redis, [this.keys.runLease(lease.unit)], [lease.token]).catch(
      (error: unknown) =>
        this.#log.warn({ err: error }, 'could not release the run’s lease; it expires by itself'),
    );
  }

  /** Renews the lease (and the run lock, when given); undefined when Redis did not answer. */
  async #renew(
    keys: [lease: string, lock: string, cancel: string],
    token: string,
    lock: GuardedLock | undefined,
  ): Promise<Renewal | undefined> {
    try {
      const [lease, lockState, holder, cancel] = (await RENEW_LEASE.run(this.redis, keys, [
        token,
        this.#ttlMs,
        lock?.runId ?? '',
        this.#lockTtlMs,
      ])) as [number, number, string, string];
      return {
        lease: lease === 1,
        lockTakenBy: lockState === 0 ? holder : undefined,
        cancellation: readCancellation(cancel),
      };
    } catch (error) {
      this.#log.warn({ err: error }, 'could not renew the run’s lease');
      return undefined;
    }
  }
}

/**
 * One execution's lease, held: `permit()` before every API call, `signal` aborted the moment
 * the execution may act no more (its deadline passed unconfirmed, or the lease or the job's run
 * lock is another's). Renewal runs on a timer until `stop()`.
 */
export class ExecutionLease {
  readonly unit: string;
  readonly token: string;
  readonly #ttlMs: number;
  readonly #clock: Clock;
  readonly #send: (lock: GuardedLock | undefined) => Promise<Renewal | undefined>;
  readonly #controller = new AbortController();
  /** Aborted, with a RunCancelledError, once the run is found cancelled. */
  readonly #halt = new AbortController();
  #renewal: Timer | undefined;
  #expiry: Timer | undefined;
  #confirmedAt: number;
  #lock: GuardedLock | undefined;
  #renewing = false;
  #stopped = false;

  constructor(options: {
    unit: string;
    token: string;
    /** When the command that took the lease was sent (monotonic ms). */
    sentAt: number;
    ttlMs: number;
    clock: Clock;
    /** The run's cancellation, read as the lease was taken. */
    cancellation?: Cancellation | undefined;
    renew: (lock: GuardedLock | undefined) => Promise<Renewal | undefined>;
  }) {
    this.unit = options.unit;
    this.token = options.token;
    this.#ttlMs = options.ttlMs;
    this.#clock = options.clock;
    this.#send = options.renew;
    this.#confirmedAt = options.sentAt;
    if (options.cancellation) this.#cancelled(options.cancellation);
    this.#armRenewal();
    this.#schedule();
  }

  /** Aborted once this execution may act no more; its reason says why. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * Aborted, with a RunCancelledError, once an operator cancelled the run (read as the lease was
   * taken and with every renewal): the execution starts no new target. It may still act.
   */
  get halt(): AbortSignal {
    return this.#halt.signal;
  }

  #cancelled(cancellation: Cancellation): void {
    if (!this.#halt.signal.aborted) this.#halt.abort(new RunCancelledError(cancellation));
  }

  permit(): void {
    const { signal } = this.#controller;
    if (!signal.aborted && this.#clock.monotonic() >= this.#deadline()) this.#expire();
    signal.throwIfAborted();
  }

  /** From now on, renewals renew the job's run lock for `runId` too; `lost` says why the run stops if another run took it. */
  guardLock(job: string, runId: string, lost: (holder: string) => Error): void {
    this.#lock = { job, runId, lost };
  }

  /** Ends the renewals; the signal is left as it is. */
  stop(): void {
    this.#stopped = true;
    this.#renewal?.cancel();
    this.#expiry?.cancel();
  }

  /** The last instant this execution may act: a tenth of the TTL before the lease can expire in Redis. */
  #deadline(): number {
    return this.#confirmedAt + this.#ttlMs - Math.max(1, Math.floor(this.#ttlMs / 10));
  }

  /** A renewal every third of the TTL, whether or not the last one was answered. */
  #armRenewal(): void {
    this.#renewal = this.#clock.setTimer(Math.max(1, Math.floor(this.#ttlMs / 3)), () => {
      if (this.#stopped) return;
      this.#armRenewal();
      void this.#renew();
    });
  }

  #schedule(): void {
    this.#expiry?.cancel();
    this.#expiry = this.#clock.setTimer(Math.max(0, this.#deadline() - this.#clock.monotonic()), () =>
      this.#expire(),
    );
  }

  #stopWith(reason: Error): void {
    this.stop();
    this.#controller.abort(reason);
  }

  #expire(): void {
    this.#stopWith(
      new LeaseExpiredError(
        `its lease was not confirmed by Redis within ${this.#ttlMs} ms, so it stopped acting before another worker could take the run over`,
      ),
    );
  }

  async #renew(): Promise<void> {
    if (this.#renewing || this.#controller.signal.aborted) return;
    this.#renewing = true;
    const sentAt = this.#clock.monotonic();
    const lock = this.#lock;
    try {
      const renewed = await this.#send(lock);
      // a renewal answered after the execution ended must not arm its expiry again
      if (!renewed || this.#stopped || this.#controller.signal.aborted) return;
      if (!renewed.lease)
        return this.#stopWith(
          new LeaseExpiredError(
            'another execution holds its lease (this worker was stalled past it): it stopped acting',
          ),
        );
      this.#confirmedAt = Math.max(this.#confirmedAt, sentAt);
      this.#schedule();
      if (renewed.cancellation) this.#cancelled(renewed.cancellation);
      if (lock && renewed.lockTakenBy !== undefined) this.#stopWith(lock.lost(renewed.lockTakenBy));
    } finally {
      this.#renewing = false;
    }
  }
}
