import { describe, expect, it } from 'vitest';
import { findingKey, runChange, type SinkState } from '../../../src/notify/index.js';
import { finding, runSummary, windowRun } from '../../helpers/summaries.js';

/** The state a sink keeps after hearing about a run, as the notifier stores it. */
function heard(summary: ReturnType<typeof runSummary>, previous?: SinkState): SinkState {
  const change = runChange(summary, previous);
  if (!change?.next) throw new Error('the run raised nothing to remember');
  return change.next;
}

const A = finding('open-to-world', 'wg-1');
const B = finding('open-to-world', 'wg-2');
const C = finding('stale-entry', 'wg-1', 'critical');

describe('failure and partial', () => {
  it('a failed run raises failure, every time', () => {
    const first = runSummary({ failed: 2, succeeded: 0 });
    expect(runChange(first, undefined)?.events).toEqual(['failure']);
    expect(runChange(runSummary({ failed: 2, succeeded: 0 }), heard(first))?.events).toEqual(['failure']);
  });

  it('a cancelled run raises cancelled, and a success after it is no recovery', () => {
    const cancelled = runSummary({ outcome: 'cancelled', reason: 'cancelled by ana: wrong fleet' });
    expect(runChange(cancelled, undefined)?.events).toEqual(['cancelled']);
    expect(runChange(runSummary(), heard(cancelled))?.events).toEqual(['succeeded']);
  });

  it('a run with some failed targets raises partial', () => {
    expect(runChange(runSummary({ failed: 1, succeeded: 3 }), undefined)?.events).toEqual(['partial']);
  });

  it('a run that succeeded with nothing new raises succeeded alone (which no sink hears by default), and moves the state on', () => {
    const change = runChange(runSummary(), undefined);
    expect(change?.events).toEqual(['succeeded']);
    expect(change?.next?.outcome).toBe('succeeded');
  });
});

describe('approval-needed', () => {
  it('a run awaiting approval raises approval-needed and leaves what the sink knows, so its end is still told', () => {
    const before = heard(runSummary({ outcome: 'cancelled', reason: 'cancelled by ana' }));
    const waiting = runSummary({ outcome: 'awaiting-approval', reason: 'awaiting approval until …' });
    const change = runChange(waiting, before);
    expect(change?.events).toEqual(['approval-needed']);
    expect(change?.next).toBeUndefined();
    const done = runSummary();
    expect(runChange(done, before)?.events).toEqual(['succeeded']);
  });
});

describe('recovered', () => {
  it('is raised when a run succeeds after a failed one', () => {
    const failed = heard(runSummary({ failed: 2, succeeded: 0 }));
    const change = runChange(runSummary(), failed);
    expect(change?.events).toEqual(['recovered', 'succeeded']);
    expect(change?.previousOutcome).toBe('failed');
  });

  it('is raised when a run succeeds after a partial one', () => {
    const partial = heard(runSummary({ failed: 1 }));
    expect(runChange(runSummary(), partial)?.events).toEqual(['recovered', 'succeeded']);
  });

  it('is not raised by a success after a success, nor by the first run ever', () => {
    expect(runChange(runSummary(), heard(runSummary()))?.events).toEqual(['succeeded']);
    expect(runChange(runSummary(), undefined)?.events).toEqual(['succeeded']);
  });
});

describe('findings', () => {
  it('the first run reports every finding as new', () => {
    const change = runChange(runSummary({ findings: [A, B] }), undefined);
    expect(change?.events).toEqual(['findings', 'succeeded']);
    expect(change?.newFindings).toEqual([A, B]);
    expect(change?.resolvedFindings).toEqual([]);
  });

  it('the same findings again raise no findings event, even with a new message or severity', () => {
    const before = heard(runSummary({ findings: [A, B] }));
    const again = runChange(
      runSummary({
        findings: [
          { ...A, message: 'still open, 3 days' },
          { ...B, severity: 'critical' },
        ],
      }),
      before,
    );
    expect(again?.events).toEqual(['succeeded']);
    expect(again?.newFindings).toEqual([]);
  });

  it('reports a new finding and a resolved one together', () => {
    const before = heard(runSummary({ findings: [A, B] }));
    const change = runChange(runSummary({ findings: [A, C] }), before);
    expect(change?.events).toEqual(['findings', 'succeeded']);
    expect(change?.newFindings).toEqual([C]);
    expect(change?.resolvedFindings).toEqual([B]);
    expect(change?.next?.findings.map(findingKey)).toEqual([A, C].map(findingKey));
  });

  it('a run that partly failed reports new findings but resolves none: a failed target found nothing', () => {
    const before = heard(runSummary({ findings: [A, B] }));
    const change = runChange(runSummary({ failed: 1, findings: [C] }), before);
    expect(change?.events).toEqual(['partial', 'findings']);
    expect(change?.newFindings).toEqual([C]);
    expect(change?.resolvedFindings).toEqual([]);
    expect(change?.next?.findings.map(findingKey).sort()).toEqual([A, B, C].map(findingKey).sort());
  });

  it('a failed run resolves nothing either', () => {
    const before = heard(runSummary({ findings: [A] }));
    const change = runChange(runSummary({ failed: 2, succeeded: 0 }), before);
    expect(change?.events).toEqual(['failure']);
    expect(change?.next?.findings).toEqual([A]);
  });

  it('a finding reported twice in one run counts once', () => {
    const change = runChange(runSummary({ findings: [A, { ...A, message: 'twice' }] }), undefined);
    expect(change?.newFindings).toEqual([A]);
  });

  it('raises recovered and findings together, in a fixed order', () => {
    const failed = heard(runSummary({ failed: 2, succeeded: 0 }));
    expect(runChange(runSummary({ findings: [A] }), failed)?.events).toEqual([
      'findings',
      'recovered',
      'succeeded',
    ]);
  });
});

describe('runs that say nothing', () => {
  it('dry runs, skipped and missed runs raise nothing and change nothing', () => {
    expect(runChange(runSummary({ dryRun: true, failed: 2, succeeded: 0 }), undefined)).toBeUndefined();
    expect(runChange(runSummary({ outcome: 'skipped' }), undefined)).toBeUndefined();
    expect(runChange(runSummary({ outcome: 'missed' }), undefined)).toBeUndefined();
  });

  it('a run the sink already heard about (delivered twice) raises nothing', () => {
    const failed = runSummary({ failed: 2, succeeded: 0, findings: [A] });
    expect(runChange(failed, heard(failed))).toBeUndefined();
  });
});

describe('acted', () => {
  it('is raised by a reconciliation that paused or resumed a workspace, with its counts', () => {
    const change = runChange(windowRun({ paused: 4, failed: 1 }), undefined);
    expect(change?.events).toContain('acted');
    expect(change?.window?.done).toMatchObject({ paused: 4, resumed: 0, failed: 1 });
    expect(runChange(windowRun({ resumed: 2 }), undefined)?.events).toContain('acted');
  });

  it('is not raised by a reconciliation that changed nothing, nor by a job run, nor by an older record without counts', () => {
    expect(runChange(windowRun(), undefined)?.events).not.toContain('acted');
    expect(runChange(windowRun({ paused: 1, evidence: false }), undefined)?.events).not.toContain('acted');
    const jobRun = { ...windowRun({ paused: 3 }), action: 'pause' };
    expect(runChange(jobRun, undefined)?.events).not.toContain('acted');
  });
});

describe('drift-persists', () => {
  it('is raised once the same drift has lasted driftPersistsAfter reconciliations, and once per streak', () => {
    const second = runChange(windowRun({ streak: ['s1@t0', 2] }), undefined);
    expect(second?.events).not.toContain('drift-persists');
    const third = runChange(windowRun({ streak: ['s1@t0', 3] }), second?.next);
    expect(third?.events).toContain('drift-persists');
    const fourth = runChange(windowRun({ streak: ['s1@t0', 4] }), third?.next);
    expect(fourth?.events).not.toContain('drift-persists');
  });

  it('is raised again for a new streak, after the drift cleared or other workspaces drift', () => {
    const told = heard(windowRun({ streak: ['s1@t0', 3] }));
    const cleared = heard(windowRun(), told);
    expect(runChange(windowRun({ streak: ['s1@t9', 3] }), cleared)?.events).toContain('drift-persists');
    expect(runChange(windowRun({ streak: ['s2@t5', 5] }), told)?.events).toContain('drift-persists');
  });

  it('keeps the streak told through a reconciliation that ended before its record', () => {
    const told = heard(windowRun({ streak: ['s1@t0', 1], after: 1 }));
    const broken = heard({ ...windowRun({ evidence: false }), outcome: 'failed' }, told);
    expect(broken.driftStreak).toBe('s1@t0');
    expect(runChange(windowRun({ streak: ['s1@t0', 3], after: 1 }), broken)?.events).not.toContain(
      'drift-persists',
    );
  });
});

describe('succeeded', () => {
  it('is raised by every run that succeeded, and by no other', () => {
    expect(runChange(runSummary(), heard(runSummary()))?.events).toContain('succeeded');
    expect(runChange(runSummary({ failed: 1 }), undefined)?.events).not.toContain('succeeded');
    expect(runChange(runSummary({ dryRun: true }), undefined)).toBeUndefined();
  });
});
