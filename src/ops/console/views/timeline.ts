import type { TimelineEvent, WorkspaceTimelineView } from '../model.js';
import { describeWorkspace, stateClass } from './fleet-grid.js';
import { outcomeBadge, when } from './format.js';
import { type Html, html } from './html.js';
import { type PageContext, page, paths } from './layout.js';

const ENDED_BY: Record<string, string> = {
  resumed: 'resumed by nightshift',
  'seen-active': 'seen running (started by someone else)',
  'not-paused': 'the pause never took',
  refused: 'the API refused the pause',
};

/** What a run that succeeded on it without a reason did, by its action. */
const DONE: Record<string, string> = { pause: 'paused', resume: 'resumed' };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function runLink(runId: string, base: string): Html {
  return html`<a class="mono" href="${paths(base).run(runId)}">${runId}</a>`;
}

/** One event as a row: when, what, who, and where to read more. */
function eventRow(event: TimelineEvent, base: string, now: string): Html {
  const at = html`<td class="nowrap">${when(event.at, now)}</td>`;
  if (event.kind === 'run')
    return html`<tr>${at}
<td>${outcomeBadge(event.outcome)} ${event.reason ?? (event.outcome === 'succeeded' ? (DONE[event.action] ?? 'acted on it') : '')}${event.error ? html`<br><span class="muted">${event.error}</span>` : ''}</td>
<td><a href="${paths(base).runs(event.job)}">${event.job}</a> <span class="muted">(${event.action})</span></td>
<td>${runLink(event.runId, base)}${event.requestIds.length > 0 ? html`<br><span class="muted mono">${event.requestIds.join(' ')}</span>` : ''}</td>
</tr>`;
  if (event.kind === 'pause') {
    const what =
      event.until === null
        ? html`<strong>paused</strong>${event.state === 'intent' ? ' (intent, not confirmed yet)' : ''}, owned now`
        : html`pause ended: ${ENDED_BY[event.endedBy ?? ''] ?? event.endedBy}`;
    return html`<tr>${at}
<td>${what}</td>
<td>${event.ownerKind} <a href="${paths(base).runs(event.owner)}">${event.owner}</a></td>
<td>${event.runId ? runLink(event.runId, base) : html`<span class="muted">–</span>`}${event.requestId ? html`<br><span class="muted mono">${event.requestId}</span>` : ''}</td>
</tr>`;
  }
  return html`<tr>${at}
<td>hold <strong>${event.event}</strong>: ${event.state} until ${when(event.until)}<br><span class="muted">${event.reason}</span></td>
<td>${event.by}</td>
<td><code>${event.pattern}</code></td>
</tr>`;
}

function nowPanel(view: WorkspaceTimelineView, base: string): Html {
  const ws = view.now;
  if (!ws)
    return html`<div class="notice warn"><h2>Not in the last listing</h2><p>The fleet as the last run listed it has no workspace <code>${view.workgroupId}/${view.workspaceId}</code>: it may have been deleted. What nightshift recorded of it is below.</p></div>`;
  return html`<dl class="facts" aria-label="Now">
<dt>State</dt><dd><span class="cell ${stateClass(ws.state)}" aria-hidden="true"></span> ${ws.state}${view.listing ? html` <span class="muted">as listed ${when(view.listing.at, view.generatedAt)} by run</span> ${runLink(view.listing.runId, base)}` : ''}</dd>
<dt>Paused by</dt><dd>${ws.owner ? html`${ws.owner.kind} <strong>${ws.owner.name}</strong>${ws.owner.state === 'intent' ? ' (intent)' : ''} since ${when(ws.owner.since, view.generatedAt)}` : html`<span class="muted">nobody: nightshift owns no pause of it</span>`}</dd>
<dt>Hold</dt><dd>${ws.hold ? html`${ws.hold.state} <span class="muted">(${ws.hold.pattern})</span> until ${when(ws.hold.until, view.generatedAt)} by ${ws.hold.by}: ${ws.hold.reason}<br>${ws.hold.inEffect === false ? html`<strong>${ws.hold.effect}</strong>` : html`<span class="muted">${ws.hold.effect}</span>`}` : html`<span class="muted">none</span>`}</dd>
<dt>Window</dt><dd>${ws.window ? html`${ws.window.name} wants ${ws.window.desired ?? 'no change now'}${ws.window.drift ? html`; <strong>⚠ drift</strong>: ${ws.window.why}` : html` <span class="muted">(${ws.window.why})</span>`}` : html`<span class="muted">under no window</span>`}</dd>
</dl>
<p class="visually-hidden">${describeWorkspace(ws)}</p>`;
}

/** `/fleet/<workgroupId>/<workspaceId>`: one workspace now, and who paused, resumed or held it. */
export function renderTimeline(view: WorkspaceTimelineView, ctx: PageContext): string {
  const now = view.generatedAt;
  const name = view.now
    ? `${view.now.workgroupName} / ${view.now.name}`
    : `${view.workgroupId} / ${view.workspaceId}`;
  const stranded = view.stranded
    ? html`<div class="notice bad"><h2>⚠ Stranded</h2><p>It is stopped and nobody owns its pause, yet nightshift paused it (${view.journal?.ownerKind} ${view.journal?.owner}, run ${view.journal ? runLink(view.journal.runId, ctx.base) : ''}): nothing would hand it back. <code>nightshift adopt ${view.journal?.owner}</code> takes it back.</p></div>`
    : '';
  const rows = view.events.map((event) => eventRow(event, ctx.base, now));
  const body = html`<p class="meta"><a href="${paths(ctx.base).fleet}">Fleet</a> › <code>${view.workgroupId}/${view.workspaceId}</code></p>
${stranded}
${nowPanel(view, ctx.base)}
<h2 id="timeline">Timeline</h2>
${
  rows.length > 0
    ? html`<div class="table-wrap"><table>
<caption>Newest first: what runs did to it, the pauses nightshift owned, the holds that covered it</caption>
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Who</th><th scope="col">Run, hold or request IDs</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
    : html`<p class="muted">Nothing recorded: no run acted on it, nightshift never paused it, and no hold covered it within what is kept.</p>`
}
<p class="meta">Looked at: the ${plural(view.scope.runsKept, 'run')} kept for it (the newest that acted on it, within the history's retention), its closed pauses among the fleet's newest ${plural(view.scope.closedPausesScanned, 'closed pause')}, and the holds log's last ${plural(view.scope.holdEventsScanned, 'event')}.</p>`;
  return page(ctx, {
    title: name,
    active: 'fleet',
    json: paths(ctx.base).api.workspace(view.workgroupId, view.workspaceId),
    generatedAt: now,
    body,
  });
}
