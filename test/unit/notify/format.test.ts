import { describe, expect, it } from 'vitest';
import {
  formatNotification,
  jsonPayload,
  MAX_PAYLOAD_FINDINGS,
  type Notification,
  runLink,
  slackPayload,
  windowEvidence,
} from '../../../src/notify/index.js';
import { finding, runSummary, windowRun } from '../../helpers/summaries.js';

function notification(overrides: Partial<Notification> & Pick<Notification, 'summary'>): Notification {
  return {
    events: ['failure'],
    previousOutcome: undefined,
    newFindings: [],
    resolvedFindings: [],
    window: undefined,
    link: undefined,
    ...overrides,
  };
}

describe('json format', () => {
  it('is a stable payload with every key present', () => {
    const summary = runSummary({ job: 'nightly-pause', failed: 1, succeeded: 2 });
    const payload = jsonPayload(notification({ summary, events: ['partial'], previousOutcome: 'succeeded' }));
    expect(payload).toEqual({
      link: null,
      evidence: null,
      acted: null,
      driftPersists: null,
      kind: 'nightshift.run',
      version: 1,
      events: ['partial'],
      job: 'nightly-pause',
      action: 'allow-list-audit',
      runId: summary.runId,
      trigger: 'schedule',
      outcome: 'partial',
      previousOutcome: 'succeeded',
      reason: null,
      error: null,
      scheduledAt: '2026-03-27T20:00:00.000Z',
      startedAt: '2026-03-27T20:00:00.000Z',
      finishedAt: summary.finishedAt,
      durationMs: 1000,
      counts: { total: 3, succeeded: 2, skipped: 0, failed: 1, planned: 0 },
      failedTargets: [
        {
          key: 'wg-1/ws-100',
          workgroup: 'dev-core',
          workspace: 'ws100',
          error: {
            message: 'Internal-Error: boom',
            type: 'Internal-Error',
            status: 500,
            requestId: 'req-100',
          },
        },
      ],
      findings: { open: 0, new: 0, resolved: 0 },
      newFindings: [],
      resolvedFindings: [],
    });
  });

  it('lists new and resolved findings most severe first, capped, with complete counts', () => {
    const many = Array.from({ length: MAX_PAYLOAD_FINDINGS + 5 }, (_, i) => finding('r', `s${i}`, 'info'));
    const critical = finding('open-to-world', 'wg-9', 'critical');
    const summary = runSummary({ findings: [...many, critical] });
    const payload = jsonPayload(
      notification({
        summary,
        events: ['findings'],
        newFindings: [...many, critical],
        resolvedFindings: [finding('gone', 'wg-1')],
      }),
    );
    expect(payload.findings).toEqual({ open: many.length + 1, new: many.length + 1, resolved: 1 });
    expect(payload.newFindings).toHaveLength(MAX_PAYLOAD_FINDINGS);
    expect(payload.newFindings[0]).toEqual(critical);
    expect(payload.resolvedFindings).toEqual([finding('gone', 'wg-1')]);
  });

  it('is what formatNotification gives a json sink', () => {
    const n = notification({ summary: runSummary({ failed: 2, succeeded: 0 }) });
    expect(formatNotification('json', n)).toEqual(jsonPayload(n));
  });
});

describe('slack format', () => {
  it('names the job, the outcome, the counts and the run id', () => {
    const summary = runSummary({
      job: 'nightly-pause',
      failed: 2,
      succeeded: 0,
      reason: 'every target failed',
    });
    const message = slackPayload(notification({ summary }));
    expect(message.text).toBe('nightshift: nightly-pause failed: every target failed');
    const all = JSON.stringify(message.blocks);
    expect(all).toContain('*nightly-pause* failed');
    expect(all).toContain('2 failed (of 2)');
    expect(all).toContain(summary.runId);
    expect(all).toContain('Failed targets');
    expect(all).toContain('dev-core/ws100: Internal-Error: boom');
  });

  it('says partly failed with the share of failed targets', () => {
    const message = slackPayload(
      notification({ summary: runSummary({ job: 'j', failed: 1, succeeded: 3 }), events: ['partial'] }),
    );
    expect(message.text).toBe('nightshift: j partly failed: 1 of 4 targets failed');
  });

  it('says who cancelled the run, why, and how far it got', () => {
    const summary = runSummary({
      job: 'j',
      succeeded: 3,
      outcome: 'cancelled',
      reason: 'cancelled by ana: wrong fleet',
    });
    const message = slackPayload(notification({ summary, events: ['cancelled'] }));
    expect(message.text).toBe(
      'nightshift: j cancelled by ana: wrong fleet: stopped after 3 targets (3 succeeded, 0 failed)',
    );
  });

  it('says recovered, and from what', () => {
    const message = slackPayload(
      notification({ summary: runSummary({ job: 'j' }), events: ['recovered'], previousOutcome: 'partial' }),
    );
    expect(message.text).toBe('nightshift: j recovered: succeeded after a partly failed run');
  });

  it('lists the top findings, new and resolved, and counts the rest', () => {
    const newFindings = Array.from({ length: 12 }, (_, i) => finding('open-to-world', `wg-${i}`));
    const message = slackPayload(
      notification({
        summary: runSummary({ job: 'audit', findings: newFindings }),
        events: ['findings'],
        newFindings,
        resolvedFindings: [finding('stale-entry', 'wg-x')],
      }),
    );
    expect(message.text).toBe('nightshift: audit: 12 new findings, 1 resolved');
    const sections = message.blocks.map((block) => (block.type === 'section' ? block.text.text : ''));
    const listed = sections.find((text) => text.startsWith('*New findings*')) ?? '';
    expect(listed.split('\n').filter((line) => line.startsWith('•'))).toHaveLength(10);
    expect(listed).toContain('…and 2 more');
    expect(sections.find((text) => text.startsWith('*Resolved*'))).toContain('stale-entry · wg-x');
  });

  it('escapes text from the run, so it cannot inject Slack markup or mentions', () => {
    const summary = runSummary({ job: 'j', failed: 1, succeeded: 0, reason: '<!channel> & <http://x|y>' });
    const message = slackPayload(notification({ summary }));
    expect(message.text).toContain('&lt;!channel&gt; &amp; &lt;http://x|y&gt;');
    expect(JSON.stringify(message)).not.toContain('<!channel>');
  });

  it('keeps every section text within Slack’s 3000 characters', () => {
    const summary = runSummary({ job: 'j', failed: 1, succeeded: 0, reason: 'x'.repeat(5000) });
    for (const block of slackPayload(notification({ summary })).blocks) {
      if (block.type === 'section') expect(block.text.text.length).toBeLessThanOrEqual(3000);
    }
  });
});

describe('window events, succeeded and console links', () => {
  const windowNotification = (
    events: Notification['events'],
    summary = windowRun({ paused: 4, failed: 1 }),
  ) => notification({ summary, events, window: windowEvidence(summary) });

  it('a json acted message carries the counts and the hourly cost avoided; drift-persists its streak', () => {
    const payload = jsonPayload(windowNotification(['acted']));
    expect(payload.acted).toEqual({
      paused: 4,
      resumed: 0,
      failed: 1,
      hourlyCostAvoided: 6,
      currency: 'EUR',
      unpriced: 0,
    });
    expect(payload.driftPersists).toBeNull();
    const drift = windowRun({ streak: ['s1@t0', 3] });
    expect(jsonPayload(windowNotification(['drift-persists'], drift)).driftPersists).toEqual({
      workspaces: 2,
      reconciliations: 3,
      since: '2026-11-20T18:31:00.000Z',
    });
  });

  it('a slack acted message says what the window paused, resumed and failed, and what it saves an hour', () => {
    const message = slackPayload(windowNotification(['acted']));
    expect(message.text).toBe(
      'nightshift: office: off period: paused 4, resumed 0, 1 failed; about 6.00 EUR an hour avoided',
    );
    const all = JSON.stringify(message.blocks);
    expect(all).toContain('*Paused*\\n4');
    expect(all).toContain('*Est. cost avoided an hour*\\n6.00 EUR');
  });

  it('says the cost avoided is unknown when no pause had a price', () => {
    const summary = windowRun({ paused: 2 });
    const window = windowEvidence(summary);
    if (!window) throw new Error('no window record');
    const unpriced = {
      ...window,
      done: { ...window.done, hourlyCostAvoided: null, currency: null, unpriced: 2 },
    };
    const message = slackPayload(notification({ summary, events: ['acted'], window: unpriced }));
    expect(message.text).toMatch(/paused 2, resumed 0; cost avoided unknown: no price/);
  });

  it('a succeeded message carries the run’s evidence in json', () => {
    const summary = { ...runSummary({ job: 'restore-drill' }), evidence: { restoredIn: '4m12s' } };
    const payload = jsonPayload(notification({ summary, events: ['succeeded'] }));
    expect(payload.evidence).toEqual({ restoredIn: '4m12s' });
    expect(slackPayload(notification({ summary, events: ['succeeded'] })).text).toBe(
      'nightshift: restore-drill succeeded: 2 succeeded (of 2)',
    );
  });

  it('links to the run’s console page, its id encoded, in json and in slack', () => {
    const link = runLink('https://ops.example.com/nightshift/', 'office@2026-11-20T18:31:00.000Z');
    expect(link).toBe('https://ops.example.com/nightshift/runs/office%402026-11-20T18%3A31%3A00.000Z');
    const n = { ...windowNotification(['acted']), link };
    expect(jsonPayload(n).link).toBe(link);
    const context = slackPayload(n).blocks.at(-1);
    expect(JSON.stringify(context)).toContain(`<${link}|open in the console>`);
    expect(JSON.stringify(slackPayload(windowNotification(['acted'])).blocks)).not.toContain('console');
  });
});
