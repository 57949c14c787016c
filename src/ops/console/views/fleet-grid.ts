import type { FleetWorkgroupView, FleetWorkspaceView } from '../model.js';
import { utc } from './format.js';
import { escapeHtml, type Html, html, trusted } from './html.js';
import { paths } from './layout.js';

/**
 * The grid: one small cell per workspace, up to 10,000 of them, so each cell is a short string
 * built by hand (no template per cell). Each is a link to the workspace's timeline, kept out of
 * the tab order (10,000 tab stops would bury the page; the table below the grid links each
 * workspace by name for the keyboard). Its accessible name is its `title`, which says everything
 * the cell shows and more; an `aria-label` beside it would double the page's weight for no
 * reader's gain.
 */

/** The state classes a cell is drawn in: Active, Stopped, in transition, failed or unknown. */
export function stateClass(state: string): 's-a' | 's-s' | 's-t' | 's-x' {
  if (state === 'Active') return 's-a';
  if (state === 'Stopped') return 's-s';
  // Stopping, Resuming, Restoring, …: the statuses of a workspace on its way between the two
  if (/^[A-Z][a-z]+ing$/.test(state)) return 's-t';
  return 's-x';
}

/** Everything known of a workspace, in one line: the cell's title and the screen reader's name. */
export function describeWorkspace(ws: FleetWorkspaceView): string {
  let text = `${ws.name}: ${ws.state}`;
  if (ws.owner) {
    text += `; paused by ${ws.owner.kind} ${ws.owner.name} since ${utc(ws.owner.since)}`;
    if (ws.owner.state === 'intent') text += ' (intent, not confirmed yet)';
  }
  if (ws.hold)
    text += `; held (${ws.hold.state}) until ${utc(ws.hold.until)} by ${ws.hold.by}: ${ws.hold.reason} (${ws.hold.effect})`;
  if (ws.window) {
    text += `; window ${ws.window.name} wants ${ws.window.desired ?? 'no change now'}`;
    if (ws.window.drift) text += `; DRIFT: ${ws.window.why}`;
  }
  return text;
}

function cell(ws: FleetWorkspaceView, href: string): string {
  let classes = `cell ${stateClass(ws.state)}`;
  if (ws.hold) classes += ws.hold.inEffect === false ? ' hx' : ' h';
  if (ws.window?.drift) classes += ' d';
  return `<a class="${classes}" href="${escapeHtml(href)}" tabindex="-1" title="${escapeHtml(describeWorkspace(ws))}"></a>`;
}

export function workgroupGrid(workgroup: FleetWorkgroupView, base: string): Html {
  const n = workgroup.workspaces.length;
  const to = paths(base);
  const cells = workgroup.workspaces.map((ws) => cell(ws, to.workspace(workgroup.id, ws.id))).join('');
  return html`<section class="wg">
<h3>${workgroup.name} <span class="muted">${n} workspace${n === 1 ? '' : 's'}</span></h3>
<div class="grid" role="group" aria-label="${`Workspaces of ${workgroup.name}`}">${trusted(cells)}</div>
</section>`;
}

/** What the cells' colours, outline and mark mean, drawn with the same cells. */
export const LEGEND = html`<ul class="legend" aria-label="Legend">
<li><span class="cell s-a" aria-hidden="true"></span> Active</li>
<li><span class="cell s-s" aria-hidden="true"></span> Stopped</li>
<li><span class="cell s-t" aria-hidden="true"></span> in transition (Stopping, Resuming, …)</li>
<li><span class="cell s-x" aria-hidden="true"></span> failed or unknown</li>
<li><span class="cell s-a h" aria-hidden="true"></span> held (outlined)</li>
<li><span class="cell s-a hx" aria-hidden="true"></span> a hold nothing acts on here (dashed)</li>
<li><span class="cell s-a d" aria-hidden="true"></span> drift from its window (corner mark)</li>
</ul>`;
