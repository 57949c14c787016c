import type { FleetView, FleetWorkgroupView, FleetWorkspaceView } from '../model.js';
import { LEGEND, stateClass, workgroupGrid } from './fleet-grid.js';
import { span, utc, when } from './format.js';
import { type Html, html } from './html.js';
import { type PageContext, page, paths } from './layout.js';

/** Above this many workspaces (after filters) the page shows the grid alone. */
export const DETAILS_TABLE_LIMIT = 500;

/** A listing older than this is called out: the fleet may have changed since. */
const STALE_LISTING_MS = 3_600_000;

function listingNotice(view: FleetView, base: string): Html {
  const listing = view.listing;
  if (!listing) {
    return html`<div class="notice info"><h2>No listing yet</h2><p>The grid fills after the first run that lists the fleet: the console shows the last listing a run made and calls no API itself.</p></div>`;
  }
  const age = span(listing.ageMs);
  const made = html`Listed <time datetime="${listing.at}">${utc(listing.at)}</time> <span class="rel">(${age === 'just now' ? age : `${age} ago`})</span> by run <a class="mono" href="${paths(base).run(listing.runId)}">${listing.runId}</a> of job ${listing.job}.`;
  if (listing.ageMs <= STALE_LISTING_MS) return html`<p class="meta">${made}</p>`;
  return html`<div class="notice warn"><h2>⚠ The listing is ${age} old</h2><p>${made} Workspaces may have changed since; the grid updates when a run lists the fleet again.</p></div>`;
}

function option(value: string, label: string, selected: string | null): Html {
  return html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`;
}

/** A plain GET form: filtering works without the script. */
function filtersForm(view: FleetView, base: string): Html {
  const { workgroup, state } = view.filters;
  return html`<form class="filters" method="get" action="${paths(base).fleet}">
<label>Workgroup <select id="filter-workgroup" name="workgroup">${option('', 'All workgroups', workgroup)}${view.workgroupNames.map((name) => option(name, name, workgroup))}</select></label>
<label>State <select id="filter-state" name="state">${option('', 'All states', state)}${view.states.map((s) => option(s, s, state))}</select></label>
<button type="submit" id="filter-apply">Apply filters</button>
${workgroup || state ? html`<a href="${paths(base).fleet}">Clear filters</a>` : ''}
</form>`;
}

function summaryCounts(view: FleetView, shown: number): Html {
  const c = view.counts;
  const filtered = view.filters.workgroup !== null || view.filters.state !== null;
  const states = Object.entries(c.byState).sort((a, b) => b[1] - a[1]);
  return html`<ul class="stats" aria-label="Whole fleet">
<li><strong>${c.workspaces}</strong> workspaces</li>
${states.map(([state, n]) => html`<li><span class="cell ${stateClass(state)}" aria-hidden="true"></span> <strong>${n}</strong> ${state}</li>`)}
<li><strong>${c.owned}</strong> paused by nightshift</li>
<li><strong>${c.held}</strong> held</li>
${c.heldIdle > 0 ? html`<li><span class="cell s-a hx" aria-hidden="true"></span> <strong>${c.heldIdle}</strong> under a hold nothing acts on</li>` : ''}
<li><strong>${c.drifting}</strong> drifting</li>
</ul>
${filtered ? html`<p class="meta">Counts are of the whole fleet; the filters show ${shown} of them.</p>` : ''}`;
}

function ownerText(ws: FleetWorkspaceView, now: string): Html {
  const o = ws.owner;
  if (!o) return html`<span class="muted">–</span>`;
  return html`${o.kind} <strong>${o.name}</strong>${o.state === 'intent' ? ' (intent)' : ''}<br><span class="muted">since</span> ${when(o.since, now)}`;
}

function holdText(ws: FleetWorkspaceView, now: string): Html {
  const h = ws.hold;
  if (!h) return html`<span class="muted">–</span>`;
  return html`${h.state} <span class="muted">(${h.pattern}) until</span> ${when(h.until, now)}<br>by ${h.by}: ${h.reason}<br>${h.inEffect === false ? html`<strong>${h.effect}</strong>` : html`<span class="muted">${h.effect}</span>`}`;
}

function detailsTable(workgroups: readonly FleetWorkgroupView[], now: string, base: string): Html {
  const rows = workgroups.flatMap((wg) =>
    wg.workspaces.map(
      (ws) => html`<tr>
<th scope="row">${wg.name} / <a href="${paths(base).workspace(wg.id, ws.id)}"><strong>${ws.name}</strong></a></th>
<td><span class="cell ${stateClass(ws.state)}" aria-hidden="true"></span> ${ws.state}</td>
<td>${ownerText(ws, now)}</td>
<td>${holdText(ws, now)}</td>
<td>${ws.window ? html`${ws.window.name}: wants ${ws.window.desired ?? 'no change now'}` : html`<span class="muted">–</span>`}</td>
<td>${ws.window?.drift ? html`<strong>⚠ drift</strong>: ${ws.window.why}` : html`<span class="muted">none</span>`}</td>
</tr>`,
    ),
  );
  return html`<h2 id="details">Workspaces</h2>
<div class="table-wrap"><table>
<thead><tr><th scope="col">Workspace</th><th scope="col">State</th><th scope="col">Paused by</th><th scope="col">Hold</th><th scope="col">Window</th><th scope="col">Drift</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

export function renderFleet(view: FleetView, ctx: PageContext): string {
  const now = view.generatedAt;
  const shown = view.workgroups.reduce((n, wg) => n + wg.workspaces.length, 0);
  const grids =
    view.workgroups.length > 0
      ? html`${LEGEND}${view.workgroups.map((wg) => workgroupGrid(wg, ctx.base))}`
      : html`<p class="muted">${view.listing ? 'No workspace matches the filters.' : ''}</p>`;
  const body = html`${listingNotice(view, ctx.base)}
${filtersForm(view, ctx.base)}
${summaryCounts(view, shown)}
<h2 id="grid">Workgroups</h2>
${grids}
${shown > 0 && shown <= DETAILS_TABLE_LIMIT ? detailsTable(view.workgroups, now, ctx.base) : shown > 0 ? html`<p class="meta">${shown} workspaces: filter by workgroup or state to list them in a table (up to ${DETAILS_TABLE_LIMIT}).</p>` : ''}`;
  const query = new URLSearchParams();
  if (view.filters.workgroup) query.set('workgroup', view.filters.workgroup);
  if (view.filters.state) query.set('state', view.filters.state);
  const json = `${paths(ctx.base).api.fleet}${query.size > 0 ? `?${query}` : ''}`;
  return page(ctx, { title: 'Fleet', active: 'fleet', json, generatedAt: now, body });
}
