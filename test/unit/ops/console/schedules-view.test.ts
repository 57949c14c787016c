import { describe, expect, it } from 'vitest';
import { renderSchedules } from '../../../../src/ops/console/views/index.js';
import { ctx, HOSTILE, runBrief, schedulesView } from './view-models.js';

describe('the schedules page', () => {
  it('names the policy in force by its short sha, when and where it was loaded', () => {
    const page = renderSchedules(schedulesView(), ctx);
    expect(page).toContain('<code title="3f9a1c0d5e7b2a4c6d8e0f1a2b3c4d5e6f708192">3f9a1c0d5e7b</code>');
    expect(page).toContain('2026-11-25 18:00:00 UTC');
    expect(page).toContain('(2 h ago)');
    expect(page).toContain('<code>sched-1</code>');
    expect(page).not.toContain('rejected');
  });

  it('calls out a rejected edit with each of its problems', () => {
    const view = schedulesView();
    if (!view.policy) throw new Error('fixture has a policy');
    view.policy.rejected = {
      sha: 'bad0000000000000',
      at: '2026-11-25T19:30:00.000Z',
      host: 'sched-2',
      problems: ['policy.yaml:12:5: unknown action "paws"', `policy.yaml:20:3: ${HOSTILE}`],
    };
    const page = renderSchedules(view, ctx);
    expect(page).toContain('The last edit of the policy was rejected');
    expect(page).toContain('<li>policy.yaml:12:5: unknown action &quot;paws&quot;</li>');
    expect(page).toContain('&lt;script&gt;');
    expect(page).not.toContain(HOSTILE);
  });

  it('says when no policy is recorded, and why entries are missing', () => {
    expect(renderSchedules(schedulesView({ policy: null, entries: [] }), ctx)).toContain(
      'No policy recorded yet',
    );
    const page = renderSchedules(schedulesView({ entries: [], problem: 'the policy text expired' }), ctx);
    expect(page).toContain('the policy text expired');
  });

  it('lists every job and window with its action, target, schedule and next firing in local time and UTC', () => {
    const page = renderSchedules(schedulesView(), ctx);
    for (const name of ['nightly-pause', 'office-hours', 'audit-users'])
      expect(page).toContain(`<th scope="row" class="nowrap"><a href="/runs?job=${name}">${name}</a><br>`);
    expect(page).toContain('workgroups dev-* / workspaces * except dev-a/keep');
    expect(page).toContain(
      '<time datetime="2026-11-26T19:00:00.000Z">2026-11-26 20:00 <span class="muted">Europe/Berlin</span></time>',
    );
    expect(page).toContain('2026-11-26 19:00:00 UTC');
    expect(page).toContain('uptime starts');
  });

  it('marks a suspended job with who suspended it and why', () => {
    const page = renderSchedules(schedulesView(), ctx);
    expect(page).toContain('<span class="badge suspended">suspended</span> by command');
    expect(page).toContain('alice at 2026-11-25T10:00:00Z: quarter close');
    expect(page).toContain('not while suspended');
  });

  it('shows the last run by outcome in words, duration, counts, findings and a link to its detail', () => {
    const page = renderSchedules(schedulesView(), ctx);
    expect(page).toContain('<span class="badge o-partial"><span aria-hidden="true">◐</span> partial</span>');
    expect(page).toContain('2 min 04 s · 3 targets: 2 succeeded, 1 failed');
    expect(page).toContain('href="/runs/nightly-pause%3A2026-11-25T19%3A00%3A00.000Z"');
    expect(page).toContain('no run kept');
    expect(page).toContain('3 targets: 2 succeeded, 1 failed · 2 findings');
  });

  it('lists the recent runs with the worker a run was taken over from', () => {
    const page = renderSchedules(schedulesView(), ctx);
    expect(page).toContain('Recent runs');
    expect(page).toContain('href="/runs/audit-users%3A1">audit-users:1</a>');
    expect(page).toContain('taken over from worker-7');
  });

  it('shows quiet reconciliations as one row that says how many of which window, and links each job to its runs', () => {
    const quiet = runBrief({ runId: 'office-hours@9', job: 'office-hours', outcome: 'succeeded' });
    const view = schedulesView({
      recent: [
        {
          kind: 'quiet',
          count: 12,
          jobs: [{ job: 'office-hours', count: 12 }],
          drifting: 2,
          from: '2026-11-25T19:00:00.000Z',
          to: '2026-11-25T19:55:00.000Z',
          latest: quiet,
        },
        { kind: 'run', run: runBrief() },
      ],
    });
    const page = renderSchedules(view, ctx);
    expect(page).toContain('<strong>12</strong> window reconciliations that changed nothing');
    expect(page).toContain('<a href="/runs?job=office-hours">office-hours</a> 12');
    expect(page).toContain('2 reported drift they leave alone');
    expect(page).toContain('href="/runs/office-hours%409">office-hours@9</a>');
    expect(page).toContain('<a href="/runs?job=nightly-pause">nightly-pause</a>');
  });

  it('names a window’s skip calendars and their next dates, and calls out a day they skip', () => {
    const view = schedulesView();
    expect(renderSchedules(view, ctx)).toContain('skips holidays; next 2026-12-24, 2026-12-25');
    const window = view.entries[1];
    if (!window?.skip) throw new Error('fixture has a window with a calendar');
    window.skip.today = '2026-11-25';
    expect(renderSchedules(view, ctx)).toContain(
      '<span class="badge suspended">today skipped</span> <span class="muted">2026-11-25 is in holidays: no uptime today</span>',
    );
  });

  it('escapes names and reasons that come from the policy and the API', () => {
    const view = schedulesView({
      recent: [{ kind: 'run', run: runBrief({ job: HOSTILE, reason: HOSTILE }) }],
    });
    const first = view.entries[0];
    if (!first) throw new Error('fixture has entries');
    first.name = HOSTILE;
    first.target = HOSTILE;
    const page = renderSchedules(view, ctx);
    expect(page).not.toContain(HOSTILE);
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
  });
});
