import { describe, expect, it } from 'vitest';
import { FailureBudget, RunHaltedError, type TargetRecord } from '../../../src/engine/index.js';

const record = (key: string, outcome: TargetRecord['outcome']): TargetRecord => ({
  key,
  outcome,
  attempts: 1,
  requestIds: [],
  ...(outcome === 'failed' ? { error: { message: `${key} refused` } } : {}),
});

describe('FailureBudget', () => {
  it('halts at the Nth failure, naming the failed targets', () => {
    const budget = new FailureBudget({ failures: 2 });
    budget.record(record('a', 'failed'));
    budget.record(record('b', 'succeeded'));
    expect(budget.halt.aborted).toBe(false);
    budget.record(record('c', 'failed'));
    expect(budget.halt.aborted).toBe(true);
    expect(budget.halt.reason).toBeInstanceOf(RunHaltedError);
    expect((budget.halt.reason as Error).message).toBe(
      'halted: 2 of 3 finished targets failed (stopAfter: 2 failures): a: a refused; c: c refused',
    );
  });

  it('judges a failure rate only once minTargets have finished, and counts skipped targets as finished', () => {
    const budget = new FailureBudget({ percent: 20, minTargets: 5 });
    budget.record(record('a', 'failed'));
    budget.record(record('b', 'failed'));
    budget.record(record('c', 'skipped'));
    budget.record(record('d', 'succeeded'));
    // 2 of 4 failed, but fewer than 5 have finished
    expect(budget.halt.aborted).toBe(false);
    budget.record(record('e', 'succeeded'));
    expect(budget.halt.aborted).toBe(true);
  });

  it('does not halt while the share stays under the rate', () => {
    const budget = new FailureBudget({ percent: 50, minTargets: 2 });
    for (const key of ['a', 'b', 'c']) budget.record(record(key, 'succeeded'));
    budget.record(record('d', 'failed'));
    expect(budget.halt.aborted).toBe(false);
  });
});
