import type { SavingsView } from '../model.js';
import { hours, money, when } from './format.js';
import { type Html, html } from './html.js';
import { type PageContext, page, paths } from './layout.js';
import { savingsChart } from './savings-chart.js';

/** The day's hours per workgroup, most first: `dev 3.50 h, ops 1.00 h`. */
function byWorkgroup(day: SavingsView['days'][number]): string {
  return Object.entries(day.byWorkgroup)
    .filter(([, amount]) => amount.pausedHours > 0)
    .sort((a, b) => b[1].pausedHours - a[1].pausedHours)
    .map(([name, amount]) => `${name} ${hours(amount.pausedHours)} h`)
    .join(', ');
}

function daysTable(view: SavingsView): Html {
  const rows = view.days.map(
    (day) =>
      html`<tr><th scope="row"><time datetime="${day.date}">${day.date}</time></th><td class="num">${hours(day.pausedHours)}</td><td class="num">${money(day.estimatedCost, view.currency)}</td><td>${byWorkgroup(day) || html`<span class="muted">–</span>`}</td></tr>`,
  );
  // a month is read at a glance; a longer span's table starts folded
  return html`<details id="days-table"${view.days.length <= 31 ? html` open` : ''}>
<summary>Numbers per day</summary>
<div class="table-wrap"><table>
<caption>Paused hours and estimated cost per UTC day, oldest first</caption>
<thead><tr><th scope="col">Day</th><th scope="col" class="num">Paused hours</th><th scope="col" class="num">Estimated cost</th><th scope="col">By workgroup</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
</details>`;
}

function workgroupsTable(view: SavingsView): Html {
  if (view.workgroups.length === 0)
    return html`<p class="muted">Nothing was paused by nightshift in this span.</p>`;
  const total = view.total.pausedHours;
  const rows = view.workgroups.map(
    (w) =>
      html`<tr><th scope="row">${w.workgroup}</th><td class="num">${hours(w.pausedHours)}</td><td class="num">${money(w.estimatedCost, view.currency)}</td><td class="num">${total > 0 ? `${((100 * w.pausedHours) / total).toFixed(1)} %` : '–'}</td></tr>`,
  );
  return html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Workgroup</th><th scope="col" class="num">Paused hours</th><th scope="col" class="num">Estimated cost</th><th scope="col" class="num">Share of hours</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th scope="row">Total</th><td class="num">${hours(total)}</td><td class="num">${money(view.total.estimatedCost, view.currency)}</td><td class="num">${total > 0 ? '100 %' : '–'}</td></tr></tfoot>
</table></div>`;
}

function ownersTable(view: SavingsView, base: string): Html {
  if (view.owners.length === 0)
    return html`<p class="muted">Nothing was paused by nightshift in this span.</p>`;
  const total = view.total.pausedHours;
  const rows = view.owners.map(
    (o) =>
      html`<tr><th scope="row"><a href="${paths(base).runs(o.owner)}">${o.owner}</a> <span class="badge tag">${o.kind}</span></th><td class="num">${hours(o.pausedHours)}</td><td class="num">${money(o.estimatedCost, view.currency)}</td><td class="num">${total > 0 ? `${((100 * o.pausedHours) / total).toFixed(1)} %` : '–'}</td></tr>`,
  );
  return html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Window or job</th><th scope="col" class="num">Paused hours</th><th scope="col" class="num">Estimated cost</th><th scope="col" class="num">Share of hours</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th scope="row">Total</th><td class="num">${hours(total)}</td><td class="num">${money(view.total.estimatedCost, view.currency)}</td><td class="num">${total > 0 ? '100 %' : '–'}</td></tr></tfoot>
</table></div>`;
}

/** The spans offered; the one shown is among them even when asked for by URL. */
const SPANS = [7, 30, 90, 365];

/** A plain GET form, as `/savings?days=N` takes it. */
function spanForm(view: SavingsView, base: string): Html {
  const shown = view.days.length;
  const spans = [...new Set([...SPANS, shown])].sort((a, b) => a - b);
  return html`<form class="filters" method="get" action="${paths(base).savings}">
<label>Span <select id="savings-days" name="days">${spans.map((days) => html`<option value="${days}"${days === shown ? html` selected` : ''}>last ${days} days</option>`)}</select></label>
<button type="submit" id="savings-apply">Show</button>
</form>`;
}

export function renderSavings(view: SavingsView, ctx: PageContext): string {
  const now = view.generatedAt;
  const cost =
    view.currency === null
      ? html`<span class="muted">no price table in the policy</span>`
      : html`<strong>${money(view.total.estimatedCost ?? 0, view.currency)}</strong>`;
  const body = html`<p class="meta">From ${when(view.since, now)} to ${when(view.until)}, as <code>nightshift savings</code> reports it.</p>
<ul class="stats" aria-label="Totals">
<li><strong>${hours(view.total.pausedHours)}</strong> hours paused by nightshift</li>
<li>estimated cost avoided: ${cost}</li>
</ul>
${spanForm(view, ctx.base)}
<h2 id="per-day">Per day</h2>
${savingsChart(view)}
${daysTable(view)}
<h2 id="per-workgroup">Per workgroup</h2>
${workgroupsTable(view)}
<h2 id="per-owner">Per window or job</h2>
${ownersTable(view, ctx.base)}`;
  return page(ctx, {
    title: 'Savings',
    active: 'savings',
    json: `${paths(ctx.base).api.savings}?days=${view.days.length}`,
    generatedAt: now,
    body,
  });
}
