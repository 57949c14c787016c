import { describe, expect, it } from 'vitest';
import {
  describePlan,
  type PlannedChange,
  planDigest,
  plannedChanges,
  type RunSummary,
  summarize,
  unapprovedChanges,
} from '../../../src/engine/index.js';

const change = (key: string, what = 'would pause'): PlannedChange => ({
  key,
  name: `dev/${key}`,
  change: what,
});

describe('approval plans', () => {
  it("takes a dry run's planned targets, by name, with what each would do; skipped ones are no change", () => {
    const plan: RunSummary = summarize(
      { runId: 'r~plan', job: 'j', action: 'pause', trigger: 'manual', dryRun: true },
      {
        finishedAt: new Date(),
        targets: [
          {
            key: 'wg/a',
            workgroupName: 'dev',
            workspaceName: 'a',
            outcome: 'planned',
            reason: 'would pause',
            attempts: 0,
            requestIds: [],
          },
          { key: 'wg/b', outcome: 'skipped', reason: 'already paused', attempts: 0, requestIds: [] },
        ],
      },
    );
    expect(plannedChanges(plan)).toEqual([{ key: 'wg/a', name: 'dev/a', change: 'would pause' }]);
  });

  it('names what the plan now does that the approved plan did not: a new target, or another change to a known one', () => {
    const approved = [change('a'), change('b')];
    expect(unapprovedChanges(approved, [change('a')])).toEqual([]);
    expect(unapprovedChanges(approved, [change('b'), change('a')])).toEqual([]);
    expect(unapprovedChanges(approved, [change('a'), change('c')])).toEqual([
      'dev/c: would pause (not in the approved plan)',
    ]);
    expect(unapprovedChanges(approved, [change('a', 'would delete')])).toEqual([
      'dev/a: would delete (approved: would pause)',
    ]);
  });

  it('fingerprints a plan whatever its order, and says it in one line', () => {
    expect(planDigest([change('a'), change('b')])).toBe(planDigest([change('b'), change('a')]));
    expect(planDigest([change('a')])).not.toBe(planDigest([change('a', 'would resume')]));
    expect(describePlan([])).toBe('no change');
    expect(describePlan([change('a'), change('b'), change('c')], 2)).toBe(
      '3 changes: would pause dev/a, would pause dev/b and 1 more',
    );
  });
});
