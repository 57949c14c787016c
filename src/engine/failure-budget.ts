import { NightshiftError } from '../errors/index.js';
import type { StopAfter } from '../policy/index.js';
import type { TargetRecord } from './summary.js';

/** Failed targets a halted run's reason names; the summary lists them all. */
const NAMED_FAILURES = 3;

/** `failures 3` or `failureRate 20% from 10 targets`: a budget as the policy says it. */
export function describeStopAfter(budget: StopAfter): string {
  return 'failures' in budget
    ? `stopAfter: ${budget.failures} failure${budget.failures === 1 ? '' : 's'}`
    : `stopAfter: ${budget.percent}% failed from ${budget.minTargets} targets`;
}

/**
 * A run whose failure budget (`stopAfter`) was spent: it started no new target, the targets under
 * way finished, and it ends `halted`, naming the failures.
 */
export class RunHaltedError extends NightshiftError {
  override name = 'RunHaltedError';
  readonly code = 'NS_RUN_HALTED';

  constructor(budget: StopAfter, failed: readonly TargetRecord[], finished: number) {
    const named = failed
      .slice(0, NAMED_FAILURES)
      .map((record) => `${record.key}: ${record.error?.message ?? record.reason ?? 'failed'}`);
    const more = failed.length > NAMED_FAILURES ? `; and ${failed.length - NAMED_FAILURES} more` : '';
    super(
      `halted: ${failed.length} of ${finished} finished targets failed (${describeStopAfter(budget)}): ${named.join('; ')}${more}`,
    );
  }
}

/**
 * Counts a run's finished targets against its failure budget; `halt` aborts (with a
 * RunHaltedError) the moment the budget is spent, so the run starts no new target.
 */
export class FailureBudget {
  readonly #budget: StopAfter;
  readonly #halt = new AbortController();
  readonly #failed: TargetRecord[] = [];
  #finished = 0;

  constructor(budget: StopAfter) {
    this.#budget = budget;
  }

  get halt(): AbortSignal {
    return this.#halt.signal;
  }

  record(record: TargetRecord): void {
    if (record.outcome === 'planned') return;
    this.#finished += 1;
    if (record.outcome === 'failed') this.#failed.push(record);
    if (!this.#halt.signal.aborted && this.#spent())
      this.#halt.abort(new RunHaltedError(this.#budget, this.#failed, this.#finished));
  }

  #spent(): boolean {
    const budget = this.#budget;
    if ('failures' in budget) return this.#failed.length >= budget.failures;
    return (
      this.#finished >= budget.minTargets && (this.#failed.length * 100) / this.#finished >= budget.percent
    );
  }
}
