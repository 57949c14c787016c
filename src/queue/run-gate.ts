import type { TickGate } from '../engine/index.js';
import type { PolicyJob } from '../policy/index.js';
import { describeSuspension, type RunLock, type Suspensions } from '../store/index.js';
import type { RunJobData } from './run-queue.js';

/** Whether a run may start now, and if not, what becomes of it. */
export type Admission =
  /** Started at `startedAt`; `exclusive` when it holds the job's run lock. */
  | { verdict: 'start'; startedAt: Date; exclusive: boolean }
  /** The worker began closing before the run's tick: the run goes back to the queue, unstarted. */
  | { verdict: 'closing' }
  /** The job's previous run is still going and the job queues overlaps: the run waits its turn. */
  | { verdict: 'wait turn' }
  /** The run is recorded as skipped: `reason` for its summary, `message` for the log. */
  | { verdict: 'skip'; reason: string; message: string };

export interface RunGateOptions {
  ticks: TickGate;
  lock: RunLock;
  /** Looked up for scheduled runs: a job suspended after its tick was handed over is still skipped. */
  suspensions?: Suspensions;
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

  async admit(data: RunJobData, job: PolicyJob): Promise<Admission> {
    const tick = data.scheduledAt && data.trigger === 'schedule' ? Date.parse(data.scheduledAt) : 0;
    if (!(await this.#options.ticks.until(tick))) return { verdict: 'closing' };
    const startedAt = new Date();
    const suspension = data.trigger === 'manual' ? undefined : await this.#options.suspensions?.get(data.job);
    if (suspension)
      return {
        verdict: 'skip',
        reason: `skipped: ${describeSuspension(suspension)}`,
        message: 'run skipped: job suspended',
      };
    const exclusive = job.overlap !== 'allow';
    const holder = exclusive ? await this.#options.lock.take(data.job, data.runId) : undefined;
    if (holder === undefined) return { verdict: 'start', startedAt, exclusive };
    if (job.overlap === 'queue') return { verdict: 'wait turn' };
    return {
      verdict: 'skip',
      reason: `skipped: the previous run (${holder || 'of this job'}) is still running`,
      message: 'run skipped: previous run still running',
    };
  }
}
