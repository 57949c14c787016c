import { describe, expect, it } from 'vitest';
import { renderTimeline } from '../../../../src/ops/console/views/index.js';
import { ctx, HOSTILE, timelineView } from './view-models.js';

describe('the timeline page of a workspace', () => {
  it('shows the workspace now: its state, who paused it, its hold and its window, linked back to the fleet', () => {
    const page = renderTimeline(timelineView(), ctx);
    expect(page).toContain('<title>team-000 / team-000-ws-0001 · nightshift</title>');
    expect(page).toContain('<a href="/fleet">Fleet</a> › <code>wg0/ws0-1</code>');
    expect(page).toContain('window <strong>office-hours</strong> since');
    expect(page).toContain('href="/api/fleet/wg0/ws0-1"');
  });

  it('lists who paused, resumed and held it, newest first, each run and job linked', () => {
    const page = renderTimeline(timelineView(), ctx);
    expect(page).toContain('outside uptime: pausing');
    expect(page).toContain('<a class="mono" href="/runs/office-hours%4019">office-hours@19</a>');
    expect(page).toContain('<a href="/runs?job=office-hours">office-hours</a>');
    expect(page).toContain('<strong>paused</strong>, owned now');
    expect(page).toContain('pause ended: seen running (started by someone else)');
    expect(page).toContain('hold <strong>held</strong>: stopped until');
    expect(page).toContain('<code>team-*/ws-1</code>');
    expect(page.indexOf('outside uptime: pausing')).toBeLessThan(page.indexOf('seen running'));
    expect(page).toContain(
      "its closed pauses among the fleet's newest 2000 closed pauses, and the holds log's last 3 events",
    );
  });

  it('calls a stranded workspace out with the command that takes it back', () => {
    const page = renderTimeline(timelineView({ stranded: true }), ctx);
    expect(page).toContain('⚠ Stranded');
    expect(page).toContain('<code>nightshift adopt office-hours</code>');
  });

  it('says so when the last listing no longer has it, and when nothing is recorded', () => {
    const page = renderTimeline(timelineView({ now: null, events: [] }), ctx);
    expect(page).toContain('Not in the last listing');
    expect(page).toContain('Nothing recorded');
  });

  it('renders reasons from the API and holds as text, never markup', () => {
    const page = renderTimeline(timelineView(), ctx);
    expect(page).not.toContain(HOSTILE);
    expect(page).toContain('&lt;script&gt;');
  });
});
