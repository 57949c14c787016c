import { describe, expect, it } from 'vitest';
import { renderSavings } from '../../../../src/ops/console/views/index.js';
import { ctx, HOSTILE, savingsView } from './view-models.js';

describe('the savings page', () => {
  it('gives the total hours and cost over the span as `nightshift savings` does', () => {
    const view = savingsView();
    const page = renderSavings(view, ctx);
    expect(page).toContain(
      `<strong>${view.total.pausedHours.toFixed(2)}</strong> hours paused by nightshift`,
    );
    expect(page).toContain(`<strong>${(view.total.estimatedCost ?? 0).toFixed(2)} EUR</strong>`);
  });

  it('draws one bar per day, each with a title for hover, stacked by workgroup', () => {
    const page = renderSavings(savingsView(), ctx);
    const bars = page.match(/<g class="bar"><title>[^<]+<\/title>/g) ?? [];
    expect(bars).toHaveLength(30);
    expect(bars[0]).toContain('2026-10-27: 12.50 h paused, 6.25 EUR');
    expect(page).toContain('<rect class="p0"');
    expect(page).toContain('<rect class="p1"');
    expect(page).toContain('role="img" aria-labelledby="chart-title chart-desc"');
    expect(page).toContain('<text x="50" y="');
  });

  it('holds the same numbers per day in a table', () => {
    const view = savingsView();
    const page = renderSavings(view, ctx);
    const rows = page.match(/<tr><th scope="row"><time datetime="\d{4}-\d{2}-\d{2}">/g) ?? [];
    expect(rows).toHaveLength(30);
    expect(page).toContain(
      '<th scope="row"><time datetime="2026-10-27">2026-10-27</time></th><td class="num">12.50</td><td class="num">6.25 EUR</td><td>dev-berlin 10.00 h, ops 2.50 h</td>',
    );
  });

  it('lists each workgroup with its hours, cost and share', () => {
    const view = savingsView();
    const page = renderSavings(view, ctx);
    const dev = view.workgroups[0];
    if (!dev) throw new Error('fixture has workgroups');
    expect(page).toContain(
      `<th scope="row">dev-berlin</th><td class="num">${dev.pausedHours.toFixed(2)}</td>`,
    );
    const share = ((100 * dev.pausedHours) / view.total.pausedHours).toFixed(1);
    expect(page).toContain(`<td class="num">${share} %</td></tr>`);
  });

  it('says there is no price table when no pause was priced', () => {
    const view = savingsView({ currency: null, total: { pausedHours: 3, estimatedCost: null } });
    expect(renderSavings(view, ctx)).toContain('no price table in the policy');
  });

  it('stacks workgroups beyond the sixth as one series and escapes their names', () => {
    const view = savingsView();
    view.workgroups = Array.from({ length: 8 }, (_, i) => ({
      workgroup: i === 7 ? HOSTILE : `wg-${i}`,
      pausedHours: 10 - i,
      estimatedCost: null,
    }));
    const page = renderSavings(view, ctx);
    expect(page).toContain('2 other workgroups');
    expect(page).not.toContain(HOSTILE);
  });

  it('names a seventh workgroup in the legend instead of calling it "1 other workgroups"', () => {
    const view = savingsView();
    view.workgroups = Array.from({ length: 7 }, (_, i) => ({
      workgroup: `wg-${i}`,
      pausedHours: 10 - i,
      estimatedCost: null,
    }));
    const page = renderSavings(view, ctx);
    expect(page).not.toContain('other workgroup');
    expect(page).toContain('<span class="swatch p6" aria-hidden="true"></span> wg-6</li>');
  });

  it('lists each window and job with its hours, cost and share, linked to its runs, with a total row', () => {
    const page = renderSavings(savingsView(), ctx);
    expect(page).toContain('<h2 id="per-owner">Per window or job</h2>');
    expect(page).toContain(
      '<th scope="row"><a href="/runs?job=office-hours">office-hours</a> <span class="badge tag">window</span></th>',
    );
    expect(page).toContain(
      '<a href="/runs?job=ops-nightly">ops-nightly</a> <span class="badge tag">job</span>',
    );
  });

  it('offers the span as a GET form with the shown one selected, and links the JSON of that span', () => {
    const page = renderSavings(savingsView(), ctx);
    expect(page).toContain('<form class="filters" method="get" action="/savings">');
    expect(page).toContain('<option value="30" selected>last 30 days</option>');
    expect(page).toContain('<option value="365">last 365 days</option>');
    expect(page).toContain('href="/api/savings?days=30"');
  });
});
