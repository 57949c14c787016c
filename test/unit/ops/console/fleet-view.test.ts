import { describe, expect, it } from 'vitest';
import { DETAILS_TABLE_LIMIT, renderFleet } from '../../../../src/ops/console/views/index.js';
import { ctx, fleetView, HOSTILE } from './view-models.js';

const cells = (page: string) => page.match(/<a class="cell [^"]*" href="[^"]*" tabindex="-1"/g) ?? [];

describe('the fleet page', () => {
  it('says how old the listing is and which run of which job made it', () => {
    const page = renderFleet(fleetView(2, 5), ctx);
    expect(page).toContain(
      '(3 min ago)</span> by run <a class="mono" href="/runs/office-hours%3Areconcile%3A1">',
    );
    expect(page).toContain('of job office-hours.');
    expect(page).not.toContain('The listing is');
  });

  it('warns when the listing is over an hour old', () => {
    const view = fleetView(1, 2);
    view.listing = { at: '2026-11-25T17:00:00.000Z', ageMs: 3 * 3_600_000, runId: 'r', job: 'j' };
    expect(renderFleet(view, ctx)).toContain('The listing is 3 h old');
  });

  it('says the grid fills after the first run when no run has listed the fleet', () => {
    const page = renderFleet(fleetView(0, 0, { listing: null }), ctx);
    expect(page).toContain('The grid fills after the first run that lists the fleet');
    expect(cells(page)).toHaveLength(0);
  });

  it('draws one cell per workspace, each a link to its timeline out of the tab order, classed by state, hold and drift', () => {
    const page = renderFleet(fleetView(2, 21), ctx);
    expect(cells(page)).toHaveLength(42);
    expect(page).toContain(
      '<a class="cell s-a h d" href="/fleet/wg0/ws0-0" tabindex="-1" title="team-000-ws-0000: Active;',
    );
    expect(page).toContain(
      '<a class="cell s-s" href="/fleet/wg0/ws0-1" tabindex="-1" title="team-000-ws-0001: Stopped;',
    );
    expect(page).toContain(
      '<a class="cell s-t" href="/fleet/wg0/ws0-3" tabindex="-1" title="team-000-ws-0003: Stopping;',
    );
    expect(page).toContain(
      '<a class="cell s-x" href="/fleet/wg0/ws0-5" tabindex="-1" title="team-000-ws-0005: Failed;',
    );
    // the keyboard's way to a timeline: each workspace's name in the table
    expect(page).toContain('team-000 / <a href="/fleet/wg0/ws0-0"><strong>team-000-ws-0000</strong></a>');
  });

  it('tells in each cell its owner since when, its hold and its window drift, in words', () => {
    const page = renderFleet(fleetView(1, 2), ctx);
    expect(page).toContain(
      'title="team-000-ws-0000: Active; held (Active) until 2026-11-27 00:00:00 UTC by bob: demo on Friday (window office-hours keeps it active); window office-hours wants Stopped; DRIFT: Active outside uptime"',
    );
    expect(page).toContain(
      'title="team-000-ws-0001: Stopped; paused by window office-hours since 2026-11-25 18:00:00 UTC; window office-hours wants Stopped"',
    );
  });

  it('marks a hold nothing acts on apart (dashed, not outlined), says so in the cell and the table, and counts it apart', () => {
    const view = fleetView(1, 1);
    const ws = view.workgroups[0]?.workspaces[0];
    if (!ws?.hold) throw new Error('fixture has a held workspace');
    ws.hold = {
      ...ws.hold,
      state: 'stopped',
      inEffect: false,
      effect: 'nothing acts on it here: no window covers this workspace',
    };
    view.counts.heldIdle = 1;
    const page = renderFleet(view, ctx);
    expect(page).toContain('<a class="cell s-a hx d" href="/fleet/wg0/ws0-0" tabindex="-1"');
    expect(page).toContain('(nothing acts on it here: no window covers this workspace)');
    expect(page).toContain('<strong>nothing acts on it here: no window covers this workspace</strong>');
    expect(page).toContain('<strong>1</strong> under a hold nothing acts on');
  });

  it('keeps the filters in a GET form that preserves the chosen workgroup and state', () => {
    const view = fleetView(3, 4, { filters: { workgroup: 'team-001', state: 'Stopped' } });
    const page = renderFleet(view, ctx);
    expect(page).toContain('<form class="filters" method="get" action="/fleet">');
    expect(page).toContain('<option value="team-001" selected>team-001</option>');
    expect(page).toContain('<option value="team-000">team-000</option>');
    expect(page).toContain('<option value="Stopped" selected>Stopped</option>');
    expect(page).toContain('<button type="submit"');
    expect(page).toContain('href="/api/fleet?workgroup=team-001&amp;state=Stopped"');
    expect(page).toContain('Clear filters');
  });

  it('shows the whole fleet counts', () => {
    const page = renderFleet(fleetView(2, 6), ctx);
    expect(page).toContain('<strong>12</strong> workspaces');
    expect(page).toContain('<strong>4</strong> Stopped');
    expect(page).toContain('<strong>4</strong> paused by nightshift');
  });

  it(`lists the workspaces in a table only up to ${DETAILS_TABLE_LIMIT} of them`, () => {
    const small = renderFleet(fleetView(5, 100), ctx);
    expect(small).toContain('<h2 id="details">Workspaces</h2>');
    expect(small.match(/<th scope="row">team-/g)).toHaveLength(500);
    const large = renderFleet(fleetView(5, 101), ctx);
    expect(large).not.toContain('<h2 id="details">');
    expect(large).toContain('505 workspaces: filter by workgroup or state');
  });

  it('renders a workspace named like markup as text, in the cell and in the table', () => {
    const view = fleetView(1, 1);
    const ws = view.workgroups[0]?.workspaces[0];
    if (!ws) throw new Error('fixture has a workspace');
    ws.name = HOSTILE;
    const page = renderFleet(view, ctx);
    expect(page).not.toContain(HOSTILE);
    expect(page).toContain('title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;: Active;');
    expect(page).toContain('<strong>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</strong>');
  });

  it('stays under 2 MB for 10,000 workspaces', () => {
    const page = renderFleet(fleetView(100, 100), ctx);
    expect(cells(page)).toHaveLength(10_000);
    expect(Buffer.byteLength(page)).toBeLessThan(2_000_000);
  });
});
