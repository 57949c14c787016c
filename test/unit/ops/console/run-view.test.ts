import { describe, expect, it } from 'vitest';
import { renderRun, TARGETS_TABLE_LIMIT } from '../../../../src/ops/console/views/index.js';
import { ctx, HOSTILE, runDetail } from './view-models.js';

describe('the run detail page', () => {
  it('shows every request ID of the run and of each target', () => {
    const run = runDetail();
    const page = renderRun(run, run.runId, ctx);
    for (const id of ['req-list-1', 'req-list-2', 'req-a1', 'req-a2', 'req-a3', 'req-b1', 'req-b2', 'req-b3'])
      expect(page).toContain(`<li>${id}</li>`);
  });

  it('names the worker the run was taken over from and how many deliveries it took', () => {
    const run = runDetail();
    const page = renderRun(run, run.runId, ctx);
    expect(page).toContain('taken over from <code>worker-host-1:4242</code>');
    expect(page).toContain('<dt>Deliveries</dt><dd>2</dd>');
  });

  it('gives each target its outcome, attempts with throttled tries, and its error with type, status and request ID', () => {
    const run = runDetail();
    const page = renderRun(run, run.runId, ctx);
    // each workspace's name leads to its timeline
    expect(page).toContain('dev-berlin / <a href="/fleet/wg1/ws1"><strong>dev-a</strong></a>');
    expect(page).toContain('+2 throttled');
    expect(page).toContain('<strong>Internal-Error 500</strong>: internal');
    expect(page).toContain('(request ID <code>req-b3</code>)');
    expect(page).toContain('one workspace failed');
  });

  it('lists findings and the evidence', () => {
    const run = runDetail();
    const page = renderRun(run, run.runId, ctx);
    expect(page).toContain('<code>allow-list</code>');
    expect(page).toContain('not on the list');
    expect(page).toContain('<dt>restoredFrom</dt><dd>snap-1</dd>');
    expect(page).toContain('&quot;rows&quot;: 12');
  });

  it("names the run's parameters as typed, escaped, and leaves the row out for a run without any", () => {
    const run = { ...runDetail(), parameters: { backupId: 'bk-1', note: HOSTILE } };
    const page = renderRun(run, run.runId, ctx);
    expect(page).toContain('<dt>Parameters</dt><dd><code>backupId=bk-1</code>');
    expect(page).not.toContain(HOSTILE);
    expect(renderRun(runDetail(), run.runId, ctx)).not.toContain('<dt>Parameters</dt>');
  });

  it('escapes a workspace named like markup', () => {
    const run = runDetail();
    const page = renderRun(run, run.runId, ctx);
    expect(page).not.toContain(HOSTILE);
    expect(page).toContain('<strong>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</strong>');
  });

  it('says a run that is not kept expired or was never recorded, and links its JSON', () => {
    const page = renderRun(undefined, 'gone:<1>', ctx);
    expect(page).toContain('Run not kept (expired or never recorded)');
    expect(page).toContain('<code>gone:&lt;1&gt;</code>');
    expect(page).toContain('href="/api/runs/gone%3A%3C1%3E"');
  });

  it('tells a manual run by the missing tick', () => {
    const run = runDetail({ trigger: 'manual', scheduledAt: undefined, takenOverFrom: undefined });
    const page = renderRun(run, run.runId, ctx);
    expect(page).toContain('manual run');
    expect(page).not.toContain('taken over');
  });

  it(`lists at most ${TARGETS_TABLE_LIMIT} targets, those that did not succeed first, and points to the JSON for all`, () => {
    const [ok, failed] = runDetail().targets;
    if (!ok || !failed) throw new Error('fixture has two targets');
    const targets = Array.from({ length: 600 }, (_, i) => ({
      ...ok,
      key: `wg1/ok${i}`,
      workspaceName: `ok-${i}`,
    }));
    targets.push({ ...failed, key: 'wg1/zz', workspaceName: 'last-and-failed' });
    const run = runDetail({ targets });
    const page = renderRun(run, run.runId, ctx);
    expect(page.match(/<th scope="row">dev-berlin/g)).toHaveLength(TARGETS_TABLE_LIMIT);
    expect(page).toContain('<strong>last-and-failed</strong>');
    expect(page).toContain('500 of 601 targets, those that did not succeed first');
    expect(page).not.toContain('<strong>ok-499</strong>');
  });
});
