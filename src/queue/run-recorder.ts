import {
  type CheckpointStore,
  isFinalOutcome,
  type RunIdentity,
  type RunSummary,
  skippedRunSummary,
  summarize,
} from '../engine/index.js';
import type { Logger } from '../log/index.js';
import type { Notifier } from '../notify/index.js';
import type { FindingsLedger, RunHistory, RunLock, RunStarts } from '../store/index.js';
import { type Clock, systemClock } from '../time/index.js';
import type { PolicyCache, PolicyRefusalCounter, RunPolicy } from './policy-cache.js';
import { deliveriesOf, type RunDelivery, RunJobDataSchema, runIdentity } from './run-queue.js';

/** What the worker needs of the metrics (src/ops implements it): a count per finished run, and per refused policy. */
export interface RunCounter extends PolicyRefusalCounter {
  runFinished(summary: RunSummary): void;
}

export interface RunRecorderOptions {
  history: RunHistory;
  /** Each job's open findings, changed by its real runs that succeed. */
  findings: FindingsLedger;
  checkpoints: CheckpointStore;
  runStarts?: RunStarts;
  notifier?: Notifier;
  metrics?: RunCounter;
  policies: PolicyCache;
  lock: RunLock;
  log: Logger;
  /** The time runs are recorded at: the worker's clock. Default: the system's. */
  clock?: Clock;
}

/** Where a finished run is kept: the findings ledger and the run history. */
export interface RunKeeping {
  history: RunHistory;
  findings: FindingsLedger;
  log: Logger;
}

/**
 * Keeps a finished run's findings in the ledger, then its summary in the history: findings first,
 * so a reader that sees the run in the history sees its findings too. A ledger that cannot take
 * them is warned of (the history keeps them anyway, and the ledger catches up at the job's next
 * run); a history that cannot take the summary fails. A worker's runs and `run --inline`'s alike.
 */
export async function keepRun({ history, findings, log }: RunKeeping, summary: RunSummary): Promise<void> {
  try {
    await findings.record(summary);
  } catch (error) {
    log.warn(
      { err: error, runId: summary.runId, job: summary.job },
      'could not record the run’s findings; its summary is kept',
    );
  }
  await history.record(summary);
}

/** The end of every run a worker takes: its summary kept and counted, its state cleared, its sinks told. */
export class RunRecorder {
  readonly #options: RunRecorderOptions;
  readonly #clock: Clock;

  constructor(options: RunRecorderOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** The time runs are recorded at (a skipped run's start and end, a failed run's end). */
  now(): Date {
    return new Date(this.#clock.now());
  }

  /** Keeps a run (`keepRun`), then counts it in the metrics. */
  async record(summary: RunSummary): Promise<void> {
    await keepRun(this.#options, summary);
    this.#options.metrics?.runFinished(summary);
  }

  /** Records a run a worker took but did not start (its job suspended, its previous run still going). */
  async skipped(run: RunIdentity, reason: string): Promise<RunSummary> {
    const now = this.now();
    const summary = skippedRunSummary(run, reason, { startedAt: now, finishedAt: now });
    await this.record(summary);
    return summary;
  }

  /** Records a run that went to its end, and drops what only a resumption of it would need. */
  async finished(summary: RunSummary): Promise<void> {
    await this.record(summary);
    await this.#forget(summary.runId);
  }

  /**
   * Records a run stopped mid-way because another run of its job took the lock: failed, with
   * `reason` and the targets it finished (from its checkpoints).
   */
  async stopped(run: RunIdentity, startedAt: Date, reason: string): Promise<RunSummary> {
    const summary = summarize(run, {
      startedAt,
      finishedAt: this.now(),
      outcome: 'failed',
      reason,
      targets: (await this.#options.checkpoints.load(run.runId)).values(),
    });
    await this.finished(summary);
    return summary;
  }

  /** Sends a finished run to its job's sinks; never fails the run. */
  async notify({ policy, job }: RunPolicy, summary: RunSummary): Promise<void> {
    await this.#options.notifier?.notify(policy.notifications, job, summary);
  }

  /**
   * A run that failed in BullMQ and has no summary: recorded as failed, with the targets its
   * checkpoints hold, its job lock released and its sinks told. Either the worker could not start
   * it (its policy does not parse with this worker's environment, its job is gone: the reason
   * says), or BullMQ gave up on it after its workers died under it too often (`abandoned`).
   */
  async failed(delivery: RunDelivery, error: Error): Promise<void> {
    const data = RunJobDataSchema.parse(delivery.data);
    const recorded = await this.#options.history.get(data.runId);
    if (recorded && isFinalOutcome(recorded.outcome)) return;
    const run = await this.#options.policies.find(data);
    const abandoned = delivery.deferredFailure !== undefined;
    const deliveries = deliveriesOf(delivery, { abandoned });
    const summary = summarize(runIdentity(data, run?.job.action ?? 'unknown', deliveries), {
      startedAt: new Date(delivery.processedOn ?? delivery.timestamp),
      finishedAt: this.now(),
      outcome: 'failed',
      reason: abandoned
        ? `abandoned: a worker stopped while running it, ${deliveries} ${deliveries === 1 ? 'time' : 'times'} (${error.message}); targets not listed were not finished`
        : `the worker could not run it: ${error.message}`,
      targets: (await this.#options.checkpoints.load(data.runId)).values(),
    });
    await this.record(summary);
    await this.#options.lock.release(data.job, data.runId);
    await this.#forget(data.runId);
    this.#options.log.error(
      { runId: data.runId, job: data.job, deliveries, reason: summary.reason },
      abandoned ? 'run abandoned' : 'run failed before it could start',
    );
    if (run) await this.notify(run, summary);
  }

  async #forget(runId: string): Promise<void> {
    await this.#options.checkpoints.clear(runId);
    await this.#options.runStarts?.clear(runId);
  }
}
