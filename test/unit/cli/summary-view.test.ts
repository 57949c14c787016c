import { describe, expect, it } from 'vitest';
import { requestIdsCell } from '../../../src/cli/commands/history.js';
import { formatSummary, runReason } from '../../../src/cli/summary-view.js';
import { runSummary } from '../../helpers/summaries.js';

describe('a run summary for people', () => {
  it('names each target by workgroup and workspace, keeping what its key adds (a backup id), so no two rows read alike', () => {
    const summary = runSummary({ succeeded: 0 });
    summary.targets = ['bk-1', 'bk-2'].map((backupId) => ({
      key: `wg-1/ws-1/${backupId}`,
      workgroupId: 'wg-1',
      workgroupName: 'prod-core',
      workspaceId: 'ws-1',
      workspaceName: 'recs',
      outcome: 'succeeded' as const,
      attempts: 1,
      requestIds: [],
    }));
    const text = formatSummary(summary);
    expect(text).toMatch(/^prod-core\/recs\/bk-1 +succeeded/m);
    expect(text).toMatch(/^prod-core\/recs\/bk-2 +succeeded/m);
  });

  it("names the run's parameters under its counts, as typed: a secret as its reference", () => {
    const summary = runSummary({ succeeded: 1 });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a secret parameter is kept as its ${NAME}
    summary.parameters = { backupId: 'bk-1', token: '${DRILL_TOKEN}' };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: as above
    expect(formatSummary(summary).split('\n')[2]).toBe('  with backupId=bk-1, token=${DRILL_TOKEN}');
  });

  it('names a plain workspace target and a workgroup target without their ids', () => {
    const summary = runSummary({ succeeded: 1 });
    summary.targets.push({
      key: 'wg-9',
      workgroupId: 'wg-9',
      workgroupName: 'dev-edge',
      outcome: 'skipped',
      attempts: 1,
      requestIds: [],
    });
    const text = formatSummary(summary);
    expect(text).toMatch(/^dev-core\/ws0 +succeeded/m);
    expect(text).toMatch(/^dev-edge +skipped/m);
  });

  it("shows the run's own error under its reason: a refused fleet listing says why", () => {
    const message =
      'listWorkgroups GET /controller/v4/v2/workgroups → 401 Unauthorized (RequestID req-9): invalid API key';
    const summary = runSummary({ succeeded: 0, outcome: 'failed', reason: 'could not list the fleet' });
    summary.error = { message, status: 401, type: 'Unauthorized', requestId: 'req-9' };
    const lines = formatSummary(summary).split('\n');
    expect(lines.slice(2, 4)).toEqual(['  could not list the fleet', `  ${message}`]);
  });

  it("says what throttling cost: throttled tries beside each target's attempts, and their sum for the run", () => {
    const summary = runSummary({ succeeded: 2 });
    summary.targets = summary.targets.map((target, index) =>
      index === 0 ? { ...target, throttled: 3 } : target,
    );
    const lines = formatSummary(summary).split('\n');
    expect(lines[1]).toMatch(/; 3 throttled tries$/);
    expect(lines.find((line) => line.startsWith('dev-core/ws0'))).toMatch(/ 1 \(\+3 throttled\) /);
    expect(lines.find((line) => line.startsWith('dev-core/ws1'))).toMatch(/succeeded +1 /);
  });
});

describe('the run table for people (issue 23)', () => {
  /** A provider update's detail: its state before and after, long as JSON. */
  const providerDetail = (name: string) => ({
    before: { name, version: '1.0.0', components: Array.from({ length: 8 }, (_, i) => `component-${i}`) },
    after: { name, version: '1.1.0', components: Array.from({ length: 8 }, (_, i) => `component-${i}`) },
    version: '1.1.0',
  });

  it('lists failed targets first, whatever their place in the summary', () => {
    const summary = runSummary({ succeeded: 3, failed: 1 });
    // the summary holds targets by key: the failed one last
    const rows = formatSummary(summary)
      .split('\n')
      .filter((line) => line.startsWith('dev-core/'));
    expect(rows.map((row) => row.split(/ +/)[0])).toEqual([
      'dev-core/ws100',
      'dev-core/ws0',
      'dev-core/ws1',
      'dev-core/ws2',
    ]);
  });

  it("names a target's structured details instead of printing them; --details prints them", () => {
    const summary = runSummary({ succeeded: 2 });
    summary.targets = summary.targets.map((target, index) => ({
      ...target,
      detail: providerDetail(`provider-${index}`),
    }));
    const short = formatSummary(summary);
    expect(short).not.toContain('component-0');
    expect(short).toMatch(/^dev-core\/ws0 +succeeded +1 +version=1\.1\.0 +req-0$/m);
    expect(short).toContain('  before, after of 2 target(s) not shown: --details (or --json) shows them\n');
    expect(Math.max(...short.split('\n').map((line) => line.length))).toBeLessThan(120);
    const full = formatSummary(summary, { details: true });
    expect(full).toContain('before={"name":"provider-0","version":"1.0.0"');
    expect(full).not.toContain('not shown');
  });
});

describe('the history table', () => {
  it("shows a run's request IDs, a failed target's first, then how many more there are", () => {
    const summary = runSummary({ succeeded: 3, failed: 1 });
    summary.requestIds = ['req-list'];
    // runSummary gives succeeded target i the request ID req-i, failed target i req-(100 + i)
    expect(requestIdsCell(summary)).toBe('req-100,req-list +3');
    expect(requestIdsCell(runSummary({ succeeded: 0, failed: 0 }))).toBe('-');
  });

  it("gives a failed run's reason: its own, else its first failed target's error and how many more failed", () => {
    expect(runReason(runSummary({ succeeded: 1, failed: 3 }))).toBe(
      'dev-core/ws100: Internal-Error: boom; 2 more target(s) failed',
    );
    expect(runReason(runSummary({ succeeded: 0, failed: 1 }))).toBe('dev-core/ws100: Internal-Error: boom');
    const refused = runSummary({
      succeeded: 0,
      outcome: 'failed',
      reason: 'refused: 40 targets exceed maxTargets (10)',
    });
    expect(runReason(refused)).toBe('refused: 40 targets exceed maxTargets (10)');
    const unlisted = runSummary({ succeeded: 0, outcome: 'failed' });
    unlisted.error = { message: 'listWorkgroups GET /controller/v4/v2/workgroups → 401 Unauthorized' };
    expect(runReason(unlisted)).toBe('listWorkgroups GET /controller/v4/v2/workgroups → 401 Unauthorized');
    expect(runReason(runSummary({ succeeded: 2 }))).toBeUndefined();
  });
});
