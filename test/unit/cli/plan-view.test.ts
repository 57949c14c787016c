import { describe, expect, it } from 'vitest';
import { describeFindings, formatPlans } from '../../../src/cli/summary-view.js';
import { countTargets, type RunSummary, type TargetRecord } from '../../../src/engine/index.js';
import { finding } from '../../helpers/summaries.js';

function target(name: string, outcome: TargetRecord['outcome'], reason?: string): TargetRecord {
  return {
    key: `wg/${name}`,
    workgroupName: 'dev',
    workspaceName: name,
    outcome,
    attempts: 1,
    requestIds: [],
    ...(reason ? { reason } : {}),
  };
}

function plan(
  job: string,
  action: string,
  targets: TargetRecord[],
  extra: Partial<RunSummary> = {},
): RunSummary {
  return {
    runId: `${job}@manual-1`,
    job,
    action,
    trigger: 'manual',
    dryRun: true,
    durationMs: 12,
    outcome: 'succeeded',
    counts: countTargets(targets),
    targets,
    findings: [],
    requestIds: [],
    ...extra,
  };
}

const pause = plan('nightly-pause', 'pause', [
  target('a', 'planned', 'would pause (Active)'),
  target('b', 'skipped', 'already Stopped'),
  target('c', 'skipped', 'already Stopped'),
]);
const resume = plan('morning-resume', 'resume', [target('a', 'skipped', 'already Active')]);
const audit = plan('audit', 'allow-list-audit', [], {
  findings: [finding('allow-list/too-wide', 'ops'), finding('allow-list/open', 'dev', 'critical')],
});
const broken = plan('drill', 'restore-drill', [], { outcome: 'failed', reason: 'could not list the fleet' });

describe('nightshift plan, for people', () => {
  it('prints an overview row per job, then details only of the jobs that would change or found something', () => {
    expect(formatPlans([pause, resume, audit])).toBe(
      [
        'JOB             ACTION            TARGETS  WOULD DO  SKIPPED  FAILED  FINDINGS',
        'nightly-pause   pause             3        1         2        0       -',
        'morning-resume  resume            1        0         1        0       -',
        'audit           allow-list-audit  0        0         0        0       1 critical, 1 warning',
        '',
        'nightly-pause (pause) nightly-pause@manual-1: succeeded [dry run]',
        '  3 targets: 0 succeeded, 2 skipped, 0 failed, 1 planned; 12 ms',
        'TARGET  OUTCOME  ATTEMPTS  DETAIL                REQUEST IDS',
        'dev/a   planned  1         would pause (Active)',
        '  2 other target(s) not listed: nothing to change there (--json lists every one)',
        '',
        'audit (allow-list-audit) audit@manual-1: succeeded [dry run]',
        '  0 targets: 0 succeeded, 0 skipped, 0 failed; 12 ms',
        '2 finding(s):',
        'SEVERITY  RULE                 SUBJECT  MESSAGE',
        'warning   allow-list/too-wide  ops      allow-list/too-wide on ops',
        'critical  allow-list/open      dev      allow-list/open on dev',
        '',
      ].join('\n'),
    );
  });

  it('adds a NOTE column saying why a plan could not be made, and shows its details', () => {
    const text = formatPlans([resume, broken]);
    expect(text.split('\n').slice(0, 3)).toEqual([
      'JOB             ACTION         TARGETS  WOULD DO  SKIPPED  FAILED  FINDINGS  NOTE',
      'morning-resume  resume         1        0         1        0       -',
      'drill           restore-drill  0        0         0        0       -         could not list the fleet',
    ]);
    expect(text).toContain('drill (restore-drill) drill@manual-1: failed [dry run]\n  0 targets');
  });

  it('says so when nothing would change', () => {
    expect(formatPlans([resume])).toMatch(/\nnothing would change, nothing failed, no findings\n$/);
  });

  it('counts findings worst first', () => {
    expect(describeFindings([])).toEqual({ text: '-' });
    expect(
      describeFindings([
        finding('a', 'x', 'info'),
        finding('b', 'y', 'warning'),
        finding('c', 'z', 'warning'),
      ]),
    ).toEqual({ text: '2 warning, 1 info', style: 'yellow' });
  });
});
