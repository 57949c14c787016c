import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayedError, type Job, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ApiClient } from '../api/index.js';
import {
  type Action,
  type CheckpointStore,
  countTargets,
  executeRun,
  type Finding,
  type FleetStateStores,
  type RunSummary,
} from '../engine/index.js';
import type { Logger } from '../log/logger.js';
import type { Notifier } from '../notify/index.js';
import { type ActionRegistry, type Policy, type PolicyEnv, parsePolicy } from '../policy/index.js';
import type { RunHistory } from '../store/history.js';
import { type RedisKeys, redisKeys } from '../store/keys.js';
import type { PolicyStore } from '../store/policy-store.js';
import type { RunStarts } from '../store/run-starts.js';
import type { Suspensions } from '../store/suspensions.js';
import { RUN_QUEUE, type RunJobData, RunJobDataSchema, type RunJobResult } from './run-queue.js';

/** What the worker needs of the metrics (src/ops implements it): a count per finished run. */
export interface RunCounter {
  runFinished(summary: RunSummary): void;
}

export interface RunWorkerOptions {
  /** Used by BullMQ (it duplicates it for its blocking connection) and for the run locks. */
  redis: Redis;
  prefix: string;
  api: ApiClient;
  actions: ReadonlyMap<string, Action>;
  registry: ActionRegistry;
  /** The worker's own environment: `${VAR}`s in policies resolve here, never in Redis. */
  env: PolicyEnv;
  policies: PolicyStore;
  history: RunHistory;
  checkpoints: CheckpointStore;
  log: Logger;
  /** Runs processed at once by this worker. Default 50. */
  concurrency?: number;
  /** Interval of the shared poll runs use while waiting for states. Default 5000 ms. */
  pollIntervalMs?: number;
  /** How long a worker's claim on a run lasts without renewal; a dead worker's runs move on after it. Default 30 000 ms. */
  lockDurationMs?: number;
  /**
   * How many times a run may lose its worker mid-run (a crash, SIGKILL, OOM) and be handed on;
   * once more and it is failed, its summary saying so, so a run that kills every worker it
   * reaches does not go round forever. Default 5.
   */
  maxStalledCount?: number;
  /** How often a queued run whose job is still running elsewhere looks again (`overlap: queue`). Default 1000 ms. */
  overlapRetryMs?: number;
  /**
   * Looked up when a scheduled run is about to start, so a job suspended after its tick was
   * handed over (schedulers hand ticks over ahead of time) is still skipped.
   */
  suspensions?: Suspensions;
  /** Sends finished runs to the job's notification sinks; never fails a run. */
  notifier?: Notifier;
  /** Counts every summary this worker records (skipped runs included). Default: none. */
  metrics?: RunCounter;
  /** The ownership ledger, holds and windows' state runs read and write. Default: none. */
  state?: FleetStateStores;
  /** Records each run's first start and worker, so a takeover keeps the one and names the other. */
  runStarts?: RunStarts;
  /** How this worker is named to others (a run taken over says from which). Default `<host>:<pid>`. */
  id?: string;
  /** The clock ticks are waited for by, and runs decide by; tests pass a shifted one. Default: the system's. */
  now?: () => number;
}

/**
 * The worker role: takes runs off the queue and executes them. A worker that dies mid-run
 * loses its lock; BullMQ's stalled-job check hands the run to another worker, which resumes
 * from the run's checkpoints. Runs that fail as a whole are moved to BullMQ's failed state
 * without retry (their summary says why); everything else completes with its outcome.
 */
export class RunWorker {
  readonly worker: Worker<RunJobData, RunJobResult>;
  readonly #options: RunWorkerOptions;
  readonly #keys: RedisKeys;
  readonly #policies = new Map<string, Policy>();
  readonly #shutdown = new AbortController();
  /** Aborted as soon as closing starts: runs still waiting for their tick go back to the queue at once. */
  readonly #closing = new AbortController();
  /** Runs this worker is processing now. */
  #inFlight = 0;
  /** Per instant, the wait of the runs held for it (`#untilTick`). */
  readonly #gates = new Map<number, Promise<boolean>>();
  readonly id: string;
  readonly #now: () => number;

  constructor(options: RunWorkerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.id = options.id ?? `${hostname()}:${process.pid}`;
    this.#keys = redisKeys(options.prefix);
    // every run in flight (hundreds, when a burst of ticks is held for its instant) listens to these
    setMaxListeners(0, this.#closing.signal, this.#shutdown.signal);
    const lockDuration = options.lockDurationMs ?? 30_000;
    this.worker = new Worker<RunJobData, RunJobResult>(RUN_QUEUE, (job, token) => this.#process(job, token), {
      connection: options.redis,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 50,
      lockDuration,
      stalledInterval: Math.max(1000, Math.round(lockDuration / 2)),
      maxStalledCount: options.maxStalledCount ?? 5,
      autorun: false,
    });
    // Whatever failed a run without a summary (its policy unreadable here, its job gone, its
    // workers dying under it too often), the history says so: nobody waits for it in vain.
    this.worker.on('failed', (job, error) => {
      if (job)
        void this.#recordFailure(job, error).catch((failure: unknown) =>
          options.log.error({ err: failure, runId: job.id }, 'could not record a failed run'),
        );
    });
    // connection failures are already reported once per outage by the Redis client
    this.worker.on('error', (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code && CONNECTION_ERRORS.has(code)) options.log.debug({ code }, 'worker lost Redis');
      else options.log.error({ err: error }, 'worker error');
    });
  }

  start(): void {
    void this.worker.run();
  }

  /**
   * Stops taking runs and lets those in flight finish for up to `graceMs`; past it, aborts
   * them (they are picked up again by another worker, from their checkpoints).
   */
  async close(graceMs: number): Promise<void> {
    this.#closing.abort(new Error('worker closing'));
    const closing = this.worker.close();
    const timer = setTimeout(() => this.#shutdown.abort(new Error('shutdown grace period over')), graceMs);
    // BullMQ's close waits for Redis; with Redis down it would wait forever and the process
    // would never exit. Past the grace period (plus time to hand runs back) stop waiting: a run
    // still held is recovered by another worker's stalled-job check, from its checkpoints.
    // An idle worker has nothing to hand back: it need not wait out the grace period for Redis.
    const patienceMs = this.#inFlight === 0 ? IDLE_CLOSE_MS : graceMs + CLOSE_MARGIN_MS;
    let giveUp: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<'gave up'>((resolve) => {
      giveUp = setTimeout(() => resolve('gave up'), patienceMs);
    });
    try {
      if ((await Promise.race([closing, gaveUp])) === 'gave up')
        this.#options.log.warn(
          { graceMs },
          'worker could not close cleanly (Redis unreachable?); runs it held will be recovered by another worker',
        );
    } finally {
      clearTimeout(timer);
      clearTimeout(giveUp);
    }
  }

  async #policy(sha: string): Promise<Policy> {
    const cached = this.#policies.get(sha);
    if (cached) return cached;
    const text = await this.#options.policies.get(sha);
    if (text === undefined) throw new UnrecoverableError(`policy ${sha.slice(0, 12)} is no longer stored`);
    const policy = parsePolicy(text, `policy@${sha.slice(0, 12)}`, {
      registry: this.#options.registry,
      env: this.#options.env,
    });
    this.#policies.set(sha, policy);
    return policy;
  }

  async #process(job: Job<RunJobData, RunJobResult>, token: string | undefined): Promise<RunJobResult> {
    this.#inFlight += 1;
    try {
      return await this.#processRun(job, token);
    } finally {
      this.#inFlight -= 1;
    }
  }

  async #processRun(job: Job<RunJobData, RunJobResult>, token: string | undefined): Promise<RunJobResult> {
    const data = RunJobDataSchema.parse(job.data);
    const log = this.#options.log.child({ runId: data.runId, job: data.job });
    let policy: Policy;
    try {
      policy = await this.#policy(data.policySha);
    } catch (error) {
      // a policy this worker cannot parse (a missing variable here) will not parse on a retry either
      throw error instanceof UnrecoverableError
        ? error
        : new UnrecoverableError(String((error as Error).message));
    }
    const policyJob = policy.jobs.find((candidate) => candidate.name === data.job);
    if (!policyJob)
      throw new UnrecoverableError(`job "${data.job}" is not in policy ${data.policySha.slice(0, 12)}`);

    if (!(await this.#untilTick(data))) {
      await job.moveToWait(token);
      log.info('run handed back to the queue before its tick: worker closing');
      throw new WaitingError();
    }
    const startedAt = new Date();
    const suspension = data.trigger === 'manual' ? undefined : await this.#options.suspensions?.get(data.job);
    if (suspension) {
      const reason = `skipped: suspended since ${suspension.since}${suspension.reason ? ` (${suspension.reason})` : ''}`;
      const skipped = this.#skippedSummary(data, policyJob.action, reason);
      await this.#record(skipped);
      log.info({ outcome: 'skipped' }, 'run skipped: job suspended');
      return { runId: data.runId, outcome: skipped.outcome, counts: skipped.counts };
    }

    const lockKey = this.#keys.runLock(data.job);
    const exclusive = policyJob.overlap !== 'allow';
    const holder = exclusive ? await this.#takeLock(lockKey, data.runId) : undefined;
    if (holder !== undefined) {
      if (policyJob.overlap === 'queue') {
        // counted, so a run that waited its turn is not reported as delivered again and again
        await job.updateData({ ...data, overlapWaits: (data.overlapWaits ?? 0) + 1 });
        await job.moveToDelayed(Date.now() + (this.#options.overlapRetryMs ?? 1000), token);
        throw new DelayedError();
      }
      const skipped = this.#skippedSummary(
        data,
        policyJob.action,
        `skipped: the previous run (${holder || 'of this job'}) is still running`,
      );
      await this.#record(skipped);
      log.info({ outcome: 'skipped' }, 'run skipped: previous run still running');
      return { runId: data.runId, outcome: skipped.outcome, counts: skipped.counts };
    }

    let handedBack = false;
    let summary: RunSummary;
    // at most a few writes a second: one per target was a good share of a big run's CPU
    let reportedAt = 0;
    const reportProgress = (done: number, total: number) => {
      const now = Date.now();
      if (done < total && now - reportedAt < PROGRESS_INTERVAL_MS) return;
      reportedAt = now;
      void job.updateProgress({ done, total }).catch(() => undefined);
    };
    const renew = exclusive
      ? setInterval(
          () => void this.#renewLock(lockKey, data.runId),
          (this.#options.lockDurationMs ?? 30_000) / 3,
        )
      : undefined;
    try {
      const start = await this.#options.runStarts?.begin(data.runId, this.id, startedAt);
      const takenOverFrom = start?.previousWorker === this.id ? undefined : start?.previousWorker;
      summary = await executeRun(
        {
          api: this.#options.api,
          actions: this.#options.actions,
          checkpoints: this.#options.checkpoints,
          log: this.#options.log,
          signal: this.#shutdown.signal,
          pollIntervalMs: this.#options.pollIntervalMs ?? 5_000,
          onProgress: reportProgress,
          state: this.#options.state,
          now: () => new Date(this.#now()),
        },
        {
          runId: data.runId,
          job: policyJob,
          trigger: data.trigger,
          scheduledAt: data.scheduledAt ? new Date(data.scheduledAt) : undefined,
          dryRun: data.dryRun,
          deliveries: Math.max(1, job.attemptsStarted - (data.overlapWaits ?? 0)),
          startedAt: start?.startedAt ?? startedAt,
          takenOverFrom,
          pricing: policy.pricing,
        },
      );
      await this.#record(summary);
      await this.#options.checkpoints.clear(data.runId);
      await this.#options.runStarts?.clear(data.runId);
    } catch (error) {
      if (!this.#shutdown.signal.aborted || error instanceof UnrecoverableError) throw error;
      // Cut short by shutdown: back to the queue, not failed, for another worker to resume from
      // its checkpoints. The run lock stays (unrenewed): it names this run, so the resuming
      // worker takes it over, and no other run of the job starts in between.
      handedBack = true;
      await job.moveToWait(token);
      log.warn({ progress: job.progress }, 'run handed back to the queue at shutdown');
      throw new WaitingError();
    } finally {
      if (renew) clearInterval(renew);
      if (exclusive && !handedBack) await this.#releaseLock(lockKey, data.runId);
    }
    // after the lock is released: a slow webhook must not make the job's next tick an overlap
    await this.#options.notifier?.notify(policy.notifications, policyJob, summary);
    if (summary.outcome === 'failed') throw new UnrecoverableError(summary.reason ?? 'every target failed');
    return { runId: data.runId, outcome: summary.outcome, counts: summary.counts };
  }

  /**
   * A run that failed in BullMQ and has no summary: recorded as failed, with the targets its
   * checkpoints hold, its job lock released and its sinks told. Either the worker could not start
   * it (its policy does not parse with this worker's environment, its job is gone: the reason
   * says), or BullMQ gave up on it after its workers died under it too often (`abandoned`).
   */
  async #recordFailure(job: Job<RunJobData, RunJobResult>, error: Error): Promise<void> {
    const data = RunJobDataSchema.parse(job.data);
    if (await this.#options.history.get(data.runId)) return;
    const policy = await this.#policy(data.policySha).catch(() => undefined);
    const policyJob = policy?.jobs.find((candidate) => candidate.name === data.job);
    const findings: Finding[] = [];
    const targets = [...(await this.#options.checkpoints.load(data.runId)).values()]
      .sort((a, b) => a.key.localeCompare(b.key))
      .map(({ findings: targetFindings, ...record }) => {
        if (targetFindings) findings.push(...targetFindings);
        return record;
      });
    const abandoned = job.deferredFailure !== undefined;
    // BullMQ counted the pickup that failed an abandoned run as a start too
    const deliveries = Math.max(1, job.attemptsStarted - (abandoned ? 1 : 0) - (data.overlapWaits ?? 0));
    const startedAt = new Date(job.processedOn ?? job.timestamp);
    const finishedAt = new Date();
    const summary: RunSummary = {
      runId: data.runId,
      job: data.job,
      action: policyJob?.action ?? 'unknown',
      trigger: data.trigger,
      dryRun: data.dryRun,
      scheduledAt: data.scheduledAt,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      durationMs: Math.max(0, finishedAt.getTime() - startedAt.getTime()),
      outcome: 'failed',
      reason: abandoned
        ? `abandoned: a worker stopped while running it, ${deliveries} ${deliveries === 1 ? 'time' : 'times'} (${error.message}); targets not listed were not finished`
        : `the worker could not run it: ${error.message}`,
      deliveries,
      counts: countTargets(targets),
      targets,
      findings,
      requestIds: [],
    };
    await this.#record(summary);
    await this.#releaseLock(this.#keys.runLock(data.job), data.runId);
    await this.#options.checkpoints.clear(data.runId);
    await this.#options.runStarts?.clear(data.runId);
    this.#options.log.error(
      { runId: data.runId, job: data.job, deliveries, reason: summary.reason },
      abandoned ? 'run abandoned' : 'run failed before it could start',
    );
    if (policy && policyJob) await this.#options.notifier?.notify(policy.notifications, policyJob, summary);
  }

  /** Keeps a finished run's summary in the history, then counts it in the metrics. */
  async #record(summary: RunSummary): Promise<void> {
    await this.#options.history.record(summary);
    this.#options.metrics?.runFinished(summary);
  }

  #skippedSummary(data: RunJobData, action: string, reason: string): RunSummary {
    const now = new Date().toISOString();
    return {
      runId: data.runId,
      job: data.job,
      action,
      trigger: data.trigger,
      dryRun: data.dryRun,
      scheduledAt: data.scheduledAt,
      startedAt: now,
      finishedAt: now,
      durationMs: 0,
      outcome: 'skipped',
      reason,
      counts: { total: 0, succeeded: 0, skipped: 0, failed: 0, planned: 0 },
      targets: [],
      findings: [],
      requestIds: [],
    };
  }

  /**
   * Takes the job's run lock, or confirms this run already holds it (a redelivery): undefined
   * then. Otherwise the run id holding it ('' if it was released meanwhile: still a clash).
   */
  async #takeLock(key: string, runId: string): Promise<string | undefined> {
    const taken = await this.#options.redis.set(key, runId, 'PX', this.#runLockTtl(), 'NX');
    if (taken === 'OK') return undefined;
    const holder = (await this.#options.redis.get(key)) ?? '';
    return holder === runId ? undefined : holder;
  }

  /**
   * Waits until a scheduled run's tick (it was handed over ahead of it). False if the worker
   * started closing meanwhile: the run has not started and goes back to the queue.
   */
  #untilTick(data: RunJobData): Promise<boolean> {
    if (this.#closing.signal.aborted) return Promise.resolve(false);
    const at = data.scheduledAt && data.trigger === 'schedule' ? Date.parse(data.scheduledAt) : 0;
    const now = this.#now();
    if (at <= now) return Promise.resolve(true);
    // One timer per instant for every run held for it: when it fires, all of them go on in one
    // pass of the event loop, before any of their I/O is handled; with a timer each, the runs
    // first released would answer their Redis and API replies before the last were released.
    let gate = this.#gates.get(at);
    if (!gate) {
      gate = this.#sleepUntil(at, now).then(
        () => true,
        () => false,
      );
      this.#gates.set(at, gate);
      void gate.then(() => this.#gates.delete(at));
    }
    return gate;
  }

  /**
   * Sleeps until the clock reads `at`. A timer may fire a millisecond early (libuv measures from
   * the loop's cached time), and a run must never start before its tick: the rest is slept again.
   */
  async #sleepUntil(at: number, now: number): Promise<void> {
    for (let left = at - now; left > 0; left = at - this.#now())
      await sleep(left, undefined, { signal: this.#closing.signal });
  }

  /**
   * How long the job's run lock outlives its last renewal: three times the worker's claim on the
   * run. When a worker dies, BullMQ's claim expires after `lockDurationMs` and the stalled-job
   * check hands the run on up to two check intervals (one `lockDurationMs`) later; the run lock
   * must still name the run then, so the worker that resumes it takes it over and a run of the
   * job's next tick (`overlap: queue`) keeps waiting instead of slipping in between.
   */
  #runLockTtl(): number {
    return 3 * (this.#options.lockDurationMs ?? 30_000);
  }

  async #renewLock(key: string, runId: string): Promise<void> {
    await this.#options.redis
      .eval(RENEW_IF_OWNER, 1, key, runId, String(this.#runLockTtl()))
      .catch((error: unknown) => this.#options.log.warn({ err: error }, 'could not renew the run lock'));
  }

  async #releaseLock(key: string, runId: string): Promise<void> {
    await this.#options.redis
      .eval(DELETE_IF_OWNER, 1, key, runId)
      .catch((error: unknown) => this.#options.log.warn({ err: error }, 'could not release the run lock'));
  }
}

/** Least time between two progress reports of a run to BullMQ (the last one always goes). */
const PROGRESS_INTERVAL_MS = 250;

/** How long past the grace period a closing worker waits for BullMQ to hand runs back. */
const CLOSE_MARGIN_MS = 5_000;
/** How long a closing worker with no run in flight waits for BullMQ (Redis may be down). */
const IDLE_CLOSE_MS = 2_000;

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);

const RENEW_IF_OWNER = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
const DELETE_IF_OWNER = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
