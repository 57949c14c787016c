import type { AuditEntry } from '../../../store/index.js';
import type { AuditView } from '../model.js';
import { when } from './format.js';
import { type Html, html } from './html.js';
import { type PageContext, page, paths } from './layout.js';

function details(entry: AuditEntry): Html {
  const pairs = Object.entries(entry.details ?? {});
  if (pairs.length === 0) return html``;
  return html`<span class="muted">${pairs.map(([key, value], i) => `${i > 0 ? ', ' : ''}${key} ${String(value)}`)}</span>`;
}

function entriesTable(view: AuditView): Html {
  if (view.entries.length === 0)
    return html`<p class="muted" id="no-audit">No change recorded${view.since ? ` since ${view.since}` : ''}.</p>`;
  return html`<div class="table-wrap"><table id="audit">
<caption>${view.entries.length} change${view.entries.length === 1 ? '' : 's'}, newest first${view.entries.length === view.limit ? ` (the newest ${view.limit})` : ''}</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Subject</th><th scope="col">Why</th><th scope="col">From</th></tr></thead>
<tbody>${view.entries.map(
    (entry) => html`<tr>
<td class="nowrap">${when(entry.at, view.generatedAt)}</td>
<td>${entry.who}</td>
<td><code>${entry.action}</code></td>
<td><code>${entry.subject}</code><br>${details(entry)}</td>
<td>${entry.why ?? ''}</td>
<td class="mono">${entry.where}</td>
</tr>`,
  )}</tbody>
</table></div>`;
}

/** `/audit`: who changed what, when, from where and why, from the CLI and the console alike. */
export function renderAudit(view: AuditView, ctx: PageContext): string {
  const to = paths(ctx.base);
  const query = new URLSearchParams({
    ...(view.since ? { since: view.since } : {}),
    limit: String(view.limit),
  });
  const body = html`<form method="get" action="${to.audit}" class="filters">
<label for="f-since">Since</label> <input type="text" id="f-since" name="since" value="${view.since ?? ''}" placeholder="24h, 7d or 2026-12-01T08:00:00Z">
<button type="submit">Apply</button>
</form>
${entriesTable(view)}`;
  return page(ctx, {
    title: 'Audit trail',
    active: 'audit',
    json: `${to.api.audit}?${query}`,
    generatedAt: view.generatedAt,
    body,
  });
}
