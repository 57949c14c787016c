import {
  type ExecutionLease,
  type ListingAhead,
  listAhead,
  type SequencedListings,
  type TickGate,
} from '../engine/index.js';
import type { PolicyJob } from '../policy/index.js';
import { describeSuspension, type RunLock, type RunStart } from '../store/index.js';
import type { Clock } from '../time/index.js';
import type { RunJobData } from './run-queue.js';

/** Whether a run may start now, and if not, what becomes of it. */
export type Admission =
  /**
   * Started at `startedAt`; `exclusive` when it holds the job's run lock; `start` is the run's
   * start as recorded (its first start, and the worker before this one), when the lock records starts;
   * `listing` its fleet listing, asked for as it was admitted, when the gate has `listings`.
   */
  | {
      verdict: 'start';
      startedAt: Date;
      exclusive: boolean;
      start?: RunStart | undefined;
      listing?: ListingAhead | undefined;
    }
  /** The worker began closing before the run's tick: the run goes back to the queue, unstarted. */
  | { verdict: 'closing' }
  /** The job's previous run is still going and the job queues overlaps: the run waits its turn. */
  | { verdict: 'wait turn' }
  /** The run is recorded as skipped: `reason` for its summary, `message` for the log. */
  | { verdict: 'skip'; reason: string; message: string };

export interface RunGateOptions {
  ticks: TickGate;
  lock: Pick<RunLock, 'admit'>;
  /**
   * Skip scheduled runs of suspended jobs (read with the run lock, in one step): a job suspended
   * after its tick was handed over is still skipped. Default false.
   */
  checkSuspensions?: boolean;
  /** The worker admitting runs: named in each admitted run's start record. */
  worker: string;
  /** The clock a run's start is read from: the worker's (its ticks are waited on by it too). */
  clock: Clock;
  /**
   * Where an admitted run's first listing is asked for, as it is admitted: a burst of runs joins
   * its listing requests before any of them builds its context, so the requests go out within
   * milliseconds of the admissions instead of after every run's setup. Default: none.
   */
  listings?: SequencedListings | undefined;
}

/**
 * Decides, in order, whether a run may start: not before its tick; not while its job is
 * suspended (unless started by hand); not beside the job's previous run unless the job
 * allows overlap (`overlap: queue` waits, `skip` skips).
 */
export class RunGate {
  readonly #options: RunGateOptions;

  constructor(options: RunGateOptions) {
    this.#options = options;
  }

  /** `lease`: the delivery's execution lease, asked before the run's listing is. */
  async admit(data: RunJobData, job: PolicyJob, lease?: ExecutionLease): Promise<Admission> {
    const tick = data.scheduledAt && data.trigger === 'schedule' ? Date.parse(data.scheduledAt) : 0;
    if (!(await this.#options.ticks.until(tick))) return { verdict: 'closing' };
    const startedAt = new Date(this.#options.clock.now());
    const exclusive = job.overlap !== 'allow';
    const checkSuspension = data.trigger !== 'manual' && this.#options.checkSuspensions === true;
    const found = await this.#options.lock.admit(data.job, data.runId, {
      exclusive,
      checkSuspension,
      start: { worker: this.#options.worker, at: startedAt },
      suspendedAt: tick || startedAt.getTime(),
    });
    if (found.verdict === 'suspended')
      return {
        verdict: 'skip',
        reason: `skipped: ${describeSuspension(found.suspension)}`,
        message: 'run skipped: job suspended',
      };
    if (found.verdict === 'admitted')
      return {
        verdict: 'start',
        startedAt,
        exclusive,
        start: found.start,
        listing: this.#listAhead(lease, found.seq),
      };
    if (job.overlap === 'queue') return { verdict: 'wait turn' };
    return {
      verdict: 'skip',
      reason: `skipped: the previous run (${found.holder || 'of this job'}) is still running`,
      message: 'run skipped: previous run still running',
    };
  }

  #listAhead(lease: ExecutionLease | undefined, seq: number | undefined): ListingAhead | undefined {
    const { listings } = this.#options;
    if (!listings) return undefined;
    try {
      lease?.permit();
    } catch {
      // the run will find its lease lost itself, before it calls anything
      return undefined;
    }
    return listAhead(listings, seq);
  }
}
