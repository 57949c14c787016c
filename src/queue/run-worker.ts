import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Queue, Worker } from 'bullmq';
import {
  DEFAULT_LOCK_MS,
  DEFAULT_MAX_STALLS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_RUN_PART_SIZE,
  DEFAULT_WORKER_CONCURRENCY,
  WORKER_CLOSE_WAITS,
} from '../config/index.js';
import {
  executePart,
  executeRun,
  isFinalOutcome,
  LeaseExpiredError,
  partRefusal,
  type RunDependencies,
  type RunPart,
  RunSlotsByRun,
  type RunSummary,
  type SharedListings,
  sharedListings,
  TIMED_OUT,
  TickGate,
  turns,
  within,
} from '../engine/index.js';
import {
  ExecutionLease,
  loadScripts,
  type RedisFleetListings,
  type RunLeases,
  type RunListings,
  type RunLock,
} from '../store/index.js';
import { type Clock, systemClock } from '../time/index.js';
import { ApprovalGate, dryRunPlan } from './approval-gate.js';
import { BullMQ } from './bullmq.js';
import { PolicyCache, type RunPolicy, reportRefusal } from './policy-cache.js';
import { throttledProgress } from './progress.js';
import {
  guardJobLock,
  handBackAfterLease,
  handBackAtShutdown,
  recordSkip,
  runRequest,
  type TakenDelivery,
  waitForLease,
  workerErrorHandler,
} from './run-delivery.js';
import { type Admission, RunGate } from './run-gate.js';
import { queueSplitter } from './run-parts.js';
import {
  createRunQueue,
  deliveriesOf,
  queuePrefix,
  RUN_QUEUE,
  type RunDelivery,
  type RunJobData,
  RunJobDataSchema,
  type RunJobResult,
  runIdentity,
  runJobResult,
} from './run-queue.js';
import { RunRecorder } from './run-recorder.js';
import type { RunWorkerOptions } from './run-worker-options.js';

export type { RunWorkerOptions } from './run-worker-options.js';

/**
 * The worker role: takes runs off the queue and executes them. A worker that dies mid-run
 * loses its lock; BullMQ's stalled-job check hands the run to another worker, which resumes
 * from the run's checkpoints. Runs that fail as a whole are moved to BullMQ's failed state
 * without retry (their summary says why); everything else completes with its outcome.
 */
export class RunWorker {
  readonly worker: Worker<RunJobData, RunJobResult>;
  readonly id: string;
  readonly #options: RunWorkerOptions;
  readonly #lockDurationMs: number;
  readonly #clock: Clock;
  readonly #lock: RunLock;
  readonly #leases: RunLeases;
  /** A run's parts this worker holds share the job's concurrency: its calls in flight here. */
  readonly #slots = new RunSlotsByRun();
  readonly #policies: PolicyCache;
  readonly #gate: RunGate;
  readonly #recorder: RunRecorder;
  /** Where every run leaves the last fleet listing it saw, for the console. */
  readonly #lastListings: RedisFleetListings;
  /** Where split runs enqueue their parts, and the listings they leave them. */
  readonly #parts: { queue: Queue<RunJobData, RunJobResult>; listings: RunListings };
  readonly #shutdown = new AbortController();
  /** Aborted as soon as closing starts: runs still waiting for their tick go back to the queue at once. */
  readonly #closing = new AbortController();
  /** Runs this worker is processing now. */
  #inFlight = 0;
  /** Admitted runs go on to build their contexts a few a turn of the event loop (engine/turns.ts). */
  readonly #turn = turns(RUNS_PER_TURN);
  /** The client its runs call the API with: listings overlapping in time share one request. */
  readonly #listings: SharedListings;
  readonly #approvals: ApprovalGate;

  constructor(options: RunWorkerOptions) {
    this.#options = options;
    const ledger = options.state?.ledger;
    this.#clock = options.clock ?? systemClock;
    this.#listings = sharedListings(options.api, {
      sequence: ledger && (() => ledger.sequence()),
      clock: this.#clock,
    });
    this.id = options.id ?? `${hostname()}:${process.pid}`;
    this.#lockDurationMs = options.lockDurationMs ?? DEFAULT_LOCK_MS;
    // every run in flight (hundreds, when a burst of ticks is held for its instant) listens to these
    setMaxListeners(0, this.#closing.signal, this.#shutdown.signal);
    const { stores } = options;
    this.#lock = stores.lock;
    this.#leases = stores.leases;
    this.#policies = new PolicyCache({ ...options, onRefused: reportRefusal(options.log, options.metrics) });
    this.#gate = new RunGate({
      ticks: new TickGate({ clock: this.#clock, signal: this.#closing.signal }),
      lock: this.#lock,
      checkSuspensions: options.checkSuspensions,
      worker: this.id,
      clock: this.#clock,
      listings: this.#listings,
    });
    this.#recorder = new RunRecorder({
      ...options,
      findings: stores.findings,
      runStarts: stores.starts,
      policies: this.#policies,
      lock: this.#lock,
      clock: this.#clock,
    });
    this.#lastListings = stores.lastListings;
    this.#parts = {
      queue: createRunQueue({ connection: options.redis, prefix: options.prefix }),
      listings: stores.runListings,
    };
    this.#approvals = new ApprovalGate({
      approvals: stores.approvals,
      queue: this.#parts.queue,
      clock: this.#clock,
      log: options.log,
    });
    this.worker = new BullMQ.Worker<RunJobData, RunJobResult>(
      RUN_QUEUE,
      (delivery, token) => this.#process(delivery, token),
      {
        connection: options.redis,
        prefix: queuePrefix(options.redis, options.prefix),
        concurrency: options.concurrency ?? DEFAULT_WORKER_CONCURRENCY,
        lockDuration: this.#lockDurationMs,
        stalledInterval: Math.max(1000, Math.round(this.#lockDurationMs / 2)),
        maxStalledCount: options.maxStalledCount ?? DEFAULT_MAX_STALLS,
        autorun: false,
      },
    );
    // Whatever failed a run without a summary (its policy unreadable here, its job gone, its
    // workers dying under it too often), the history says so: nobody waits for it in vain.
    // A part failed for good is its run's to report (its targets fail in the run's summary).
    this.worker.on('failed', (delivery, error) => {
      if (delivery && !delivery.data.part)
        void this.#recorder
          .failed(delivery, error)
          .catch((failure: unknown) =>
            options.log.error({ err: failure, runId: delivery.id }, 'could not record a failed run'),
          );
    });
    const onError = workerErrorHandler(options.log);
    this.worker.on('error', onError);
    this.#parts.queue.on('error', onError);
  }

  start(): void {
    // cached before the first tick: a burst of runs takes its locks and records its starts by SHA
    const { redis, stores } = this.#options;
    Promise.all([...new Set([redis, stores.connection])].map(loadScripts)).catch((error: unknown) =>
      this.#options.log.debug({ err: error }, 'Redis scripts not loaded ahead: each is sent when first run'),
    );
    void this.worker.run();
  }

  /**
   * Stops taking runs and lets those in flight finish for up to `graceMs`; past it, aborts
   * them (they are picked up again by another worker, from their checkpoints).
   */
  async close(graceMs: number): Promise<void> {
    this.#closing.abort(new Error('worker closing'));
    const closing = Promise.all([this.worker.close(), this.#parts.queue.close()]);
    const timer = this.#clock.setTimer(graceMs, () =>
      this.#shutdown.abort(new Error('shutdown grace period over')),
    );
    // BullMQ's close waits for Redis; with Redis down it would wait forever and the process
    // would never exit. Past the grace period (plus time to hand runs back) stop waiting: a run
    // still held is recovered by another worker's stalled-job check, from its checkpoints.
    // An idle worker has nothing to hand back: it need not wait out the grace period for Redis.
    const patienceMs =
      this.#inFlight === 0 ? WORKER_CLOSE_WAITS.idleCloseMs : graceMs + WORKER_CLOSE_WAITS.handBackMs;
    try {
      if ((await within(closing, patienceMs)) === TIMED_OUT)
        this.#options.log.warn(
          { graceMs },
          'worker could not close cleanly (Redis unreachable?); runs it held will be recovered by another worker',
        );
    } finally {
      timer.cancel();
    }
  }

  async #process(delivery: RunDelivery, token: string | undefined): Promise<RunJobResult> {
    this.#inFlight += 1;
    try {
      return await this.#processLeased(delivery, token);
    } finally {
      this.#inFlight -= 1;
    }
  }

  /**
   * Runs a delivery under its execution's lease, taken first: while an earlier execution of the
   * run (or part) holds it, this delivery waits in the queue until the lease can have run out. An
   * execution whose lease ran out unconfirmed (Redis unreachable, this process stalled) has
   * stopped acting: its run goes back to the queue for the next execution, which resumes it.
   */
  async #processLeased(delivery: RunDelivery, token: string | undefined): Promise<RunJobResult> {
    const data = RunJobDataSchema.parse(delivery.data);
    const log = this.#options.log.child({ runId: data.runId, job: data.job });
    const taken: TakenDelivery = { delivery, token, data, log };
    const lease = await this.#leases.acquire(delivery.id ?? data.runId, randomUUID(), data.runId);
    if (!(lease instanceof ExecutionLease)) {
      // the run is alive, only taken over slowly: its job's lock must not lapse meanwhile
      await this.#lock.extend(data.job, data.runId);
      return waitForLease(taken, lease.heldForMs);
    }
    let released = false;
    try {
      return await (data.part ? this.#processPart(taken, lease, data.part) : this.#processRun(taken, lease));
    } catch (error) {
      if (!(lease.signal.reason instanceof LeaseExpiredError) || this.#shutdown.signal.aborted) throw error;
      released = true;
      return handBackAfterLease(taken, lease.signal.reason, () => this.#leases.release(lease));
    } finally {
      if (!released) await this.#leases.release(lease);
    }
  }

  async #processRun(taken: TakenDelivery, lease: ExecutionLease): Promise<RunJobResult> {
    const { delivery, token, data, log } = taken;
    // an earlier execution may have finished the run after BullMQ handed its delivery on
    if (deliveriesOf(delivery) > 1) {
      const recorded = await this.#options.history.get(data.runId);
      if (recorded && isFinalOutcome(recorded.outcome)) {
        log.info({ outcome: recorded.outcome }, 'run already recorded by an earlier execution of it');
        if (recorded.outcome === 'failed')
          throw new BullMQ.UnrecoverableError(recorded.reason ?? 'the run failed');
        return runJobResult(recorded);
      }
    }
    const run = await this.#policies.resolve(data);
    if (data.approval?.step === 'expire') {
      const expired = await this.#approvals.expire(data);
      if (!expired) return { runId: data.runId, outcome: 'decided', counts: {} };
      await this.#recorder.record(expired);
      await this.#recorder.notify(run, expired);
      return runJobResult(expired);
    }
    const admission = await this.#gate.admit(data, run.job, lease);
    switch (admission.verdict) {
      case 'closing':
        await delivery.moveToWait(token);
        log.info('run handed back to the queue before its tick: worker closing');
        throw new BullMQ.WaitingError();
      case 'wait turn':
        // counted, so a run that waited its turn is not reported as delivered again and again
        await delivery.updateData({ ...data, overlapWaits: (data.overlapWaits ?? 0) + 1 });
        // BullMQ promotes delayed jobs by its own reading of the system's time, not the worker's clock
        await delivery.moveToDelayed(Date.now() + (this.#options.overlapRetryMs ?? OVERLAP_RETRY_MS), token);
        throw new BullMQ.DelayedError();
      case 'skip':
        return runJobResult(await recordSkip(this.#recorder, taken, run.job.action, admission));
    }
    await this.#turn();
    const summary = await this.#execute(taken, lease, run, admission).finally(() =>
      admission.listing?.cancel(),
    );
    // after the lock is released: a slow webhook must not make the job's next tick an overlap
    await this.#recorder.notify(run, summary);
    if (summary.outcome === 'failed')
      throw new BullMQ.UnrecoverableError(summary.reason ?? 'every target failed');
    return runJobResult(summary);
  }

  /**
   * Executes an admitted run and records its summary, holding the job's run lock (if the run
   * took it) until the end. Cut short by shutdown, the run goes back to the queue instead.
   */
  async #execute(
    taken: TakenDelivery,
    lease: ExecutionLease,
    { policy, job: policyJob }: RunPolicy,
    { startedAt, exclusive, start, listing }: Extract<Admission, { verdict: 'start' }>,
  ): Promise<RunSummary> {
    const { delivery, data, log } = taken;
    if (exclusive) guardJobLock(lease, data, log);
    let keepLock = false;
    const shared = this.#slots.join(data.runId, policyJob.concurrency);
    try {
      const signal = AbortSignal.any([this.#shutdown.signal, lease.signal]);
      const deps = this.#runDependencies({ delivery, data }, signal, lease, exclusive);
      const runDeps = { ...deps, slots: shared.slots, listingAhead: listing?.listing };
      const request = {
        ...runRequest(delivery, data, { policy, job: policyJob }),
        startedAt: start?.startedAt ?? startedAt,
        takenOverFrom: start?.previousWorker === this.id ? undefined : start?.previousWorker,
      };
      const identity = runIdentity(data, policyJob.action, deliveriesOf(delivery));
      const awaiting = request.dryRun
        ? undefined
        : await this.#approvals.judge(data, policyJob, identity, () =>
            dryRunPlan(runDeps, request, this.#options.checkpoints),
          );
      const ran = awaiting ?? (await executeRun(runDeps, request));
      const summary =
        awaiting || !policyJob.approval || request.dryRun ? ran : await this.#approvals.acted(ran);
      await this.#recorder.finished(summary);
      return summary;
    } catch (error) {
      const stopped = lease.signal.reason;
      if (stopped instanceof BullMQ.UnrecoverableError) {
        const identity = runIdentity(data, policyJob.action, deliveriesOf(delivery));
        await this.#recorder.stopped(identity, startedAt, stopped.message);
        throw stopped;
      }
      // The run lock stays (unrenewed) when the run goes back to the queue: it names this run, so
      // the resuming execution takes it over, and no other run of the job starts in between.
      keepLock = stopped instanceof LeaseExpiredError;
      if (keepLock || !this.#handsBack(error)) throw error;
      keepLock = true;
      return handBackAtShutdown(taken);
    } finally {
      shared.release();
      if (exclusive && !keepLock) await this.#lock.release(data.job, data.runId);
    }
  }

  /**
   * Works one part of a split run: its targets, under the run's id, from the listing the run
   * stored; no tick, suspension or overlap check (the run passed them). Its summary is not
   * recorded: the run's is built from the checkpoints every part writes.
   */
  async #processPart(taken: TakenDelivery, lease: ExecutionLease, part: RunPart): Promise<RunJobResult> {
    const { delivery, data, log } = taken;
    // its run already recorded (failed, abandoned): the part must not act after the run's end
    const recorded = await this.#options.history.get(data.runId);
    if (recorded) {
      log.warn(
        { part: part.index, outcome: recorded.outcome },
        'run part dropped: its run is already recorded',
      );
      return { runId: data.runId, outcome: 'dropped', counts: {}, worker: this.id };
    }
    const { policy, job: policyJob } = await this.#policies.resolve(data);
    const exclusive = policyJob.overlap !== 'allow';
    if (exclusive) guardJobLock(lease, data, log);
    const shared = this.#slots.join(data.runId, policyJob.concurrency);
    try {
      const signal = AbortSignal.any([this.#shutdown.signal, lease.signal]);
      const deps = this.#runDependencies({ delivery, data }, signal, lease, exclusive);
      const summary = await executePart(
        { ...deps, slots: shared.slots },
        { ...runRequest(delivery, data, { policy, job: policyJob }), part },
      );
      log.info({ part: part.index, outcome: summary.outcome, counts: summary.counts }, 'run part finished');
      const refusal = partRefusal(summary, part);
      if (refusal) throw new BullMQ.UnrecoverableError(refusal);
      return { ...runJobResult(summary), worker: this.id };
    } catch (error) {
      if (lease.signal.aborted) throw lease.signal.reason;
      if (!this.#handsBack(error)) throw error;
      return handBackAtShutdown(taken);
    } finally {
      shared.release();
    }
  }

  /**
   * Whether a delivery that threw goes back to the queue: cut short by shutdown, it is not failed,
   * and another worker resumes it from its checkpoints; what failed it for good is thrown on.
   */
  #handsBack(error: unknown): boolean {
    return this.#shutdown.signal.aborted && !(error instanceof BullMQ.UnrecoverableError);
  }

  #runDependencies(
    { delivery, data }: Pick<TakenDelivery, 'delivery' | 'data'>,
    signal: AbortSignal,
    lease: ExecutionLease,
    exclusive: boolean,
  ): RunDependencies {
    return {
      api: this.#listings.api,
      lister: this.#listings,
      io: this.#options.io,
      actions: this.#options.actions,
      checkpoints: this.#options.checkpoints,
      // every line of the execution says which one it is: a run taken over has several
      log: this.#options.log.child({ execution: lease.token.slice(0, 8) }),
      signal,
      lease,
      halt: lease.halt,
      exclusive,
      pollIntervalMs: this.#options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      onProgress: throttledProgress((progress) => delivery.updateProgress(progress)),
      state: this.#options.state,
      listings: this.#lastListings,
      split: queueSplitter(
        {
          ...this.#parts,
          partSize: this.#options.partSize ?? DEFAULT_RUN_PART_SIZE,
          pollIntervalMs: Math.min(
            this.#options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
            PART_POLL_MAX_MS,
          ),
        },
        data,
      ),
      clock: this.#clock,
    };
  }
}

/** Admitted runs that go on in one turn of the event loop: a cold worker builds 50 contexts in about 10 ms. */
const RUNS_PER_TURN = 50;

/** How often a queued run whose job is still running elsewhere looks again (`overlap: queue`). */
const OVERLAP_RETRY_MS = 1_000;

/** A split run looks at its parts at least this often: its summary follows its last part closely. */
const PART_POLL_MAX_MS = 200;
