import { HOLD_STATES } from '../../../engine/index.js';
import type { HoldPreviewView, HoldsView } from '../model.js';
import { when } from './format.js';
import { actionForm, offers, textField } from './forms.js';
import { type Html, html } from './html.js';
import { type PageContext, page, paths } from './layout.js';

/** Past this many the preview lists a part of what a hold matches, the JSON all. */
export const PREVIEW_LIST_LIMIT = 200;

function holdsTable(view: HoldsView, ctx: PageContext): Html {
  if (view.holds.length === 0) return html`<p class="muted" id="no-holds">No hold is in force.</p>`;
  const to = paths(ctx.base);
  const rows = view.holds.map(
    ({ hold, matches }) => html`<tr>
<th scope="row"><code>${hold.pattern}</code></th>
<td>${hold.state}</td>
<td>${when(hold.until, view.generatedAt)}</td>
<td>${hold.by}</td>
<td>${hold.reason}</td>
<td class="num">${matches ?? html`<span class="muted">unknown</span>`}</td>
<td>${actionForm(ctx, 'release', to.release, {
      fields: html`<input type="hidden" name="pattern" value="${hold.pattern}">`,
      button: 'Release',
      label: `Release the hold on ${hold.pattern}`,
    })}</td>
</tr>`,
  );
  return html`<div class="table-wrap"><table id="holds">
<caption>${view.holds.length} hold${view.holds.length === 1 ? '' : 's'} in force, newest first</caption>
<thead><tr><th scope="col">Workspaces</th><th scope="col">State</th><th scope="col">Until</th><th scope="col">By</th><th scope="col">Reason</th><th scope="col" class="num">Matches</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

/** The first step of placing a hold: a GET to the preview, which changes nothing. */
function holdForm(ctx: PageContext, form?: HoldPreviewView['form']): Html {
  if (!offers(ctx, 'hold')) return html``;
  const options = HOLD_STATES.map(
    (state) =>
      html`<option value="${state}"${form?.state === state ? html` selected` : ''}>${state}</option>`,
  );
  return html`<h2 id="place">Place a hold</h2>
<p class="meta">Keeps workspaces active or stopped until a time, whatever windows and pause or resume jobs say. The preview shows what it matches before anything is placed.</p>
<form method="get" action="${paths(ctx.base).holdPreview}" class="hold-form" id="hold-form">
<p>${textField('pattern', 'Workspaces', { value: form?.pattern, placeholder: 'dev-alpha/kg or dev-*/*', required: true })}</p>
<p><label for="f-state">State</label> <select id="f-state" name="state">${options}</select></p>
<p>${textField('for', 'For', { value: form?.for, placeholder: '2h, 3d' })} or ${textField('until', 'until', { value: form?.until, placeholder: '2026-12-01T08:00:00Z' })}</p>
<p>${textField('reason', 'Reason', { value: form?.reason, required: true })}</p>
<p><button type="submit">Preview</button></p>
</form>`;
}

/** `/holds`: the holds in force (each with its release button), and the form to place one. */
export function renderHolds(view: HoldsView, ctx: PageContext): string {
  const to = paths(ctx.base);
  return page(ctx, {
    title: 'Holds',
    active: 'holds',
    json: to.api.holds,
    generatedAt: view.generatedAt,
    body: html`${holdsTable(view, ctx)}${holdForm(ctx)}`,
  });
}

function matchesList(matches: NonNullable<HoldPreviewView['matches']>): Html {
  if (matches.length === 0) return html``;
  const listed = matches.slice(0, PREVIEW_LIST_LIMIT);
  return html`<div class="table-wrap"><table id="matched">
<caption>${listed.length < matches.length ? `The first ${listed.length} of ${matches.length}` : `${matches.length}`} workspace${matches.length === 1 ? '' : 's'} it matches</caption>
<thead><tr><th scope="col">Workspace</th><th scope="col">Status</th><th scope="col">Note</th></tr></thead>
<tbody>${listed.map(
    (ws) =>
      html`<tr><th scope="row">${ws.workspace}</th><td>${ws.status ?? html`<span class="muted">unknown</span>`}</td><td>${ws.nothingActs ? 'nothing acts on it: no window covers it and no pause or resume job targets it, so the hold changes nothing here' : ''}</td></tr>`,
  )}</tbody>
</table></div>`;
}

/** The second step: what the pattern matches, and the form that places the hold as previewed. */
function placeForm(view: HoldPreviewView, ctx: PageContext): Html {
  if (view.problem) return html``;
  const count = view.matches?.length;
  const hidden = (['pattern', 'state', 'for', 'until', 'reason'] as const).map(
    (name) => html`<input type="hidden" name="${name}" value="${view.form[name]}">`,
  );
  return actionForm(ctx, 'hold', paths(ctx.base).holds, {
    fields: html`${hidden}`,
    button: count === 0 ? 'Place hold anyway (for a workspace yet to be created)' : 'Place hold',
  });
}

/** `/holds/preview`: the workspaces a hold would match, before it is placed. */
export function renderHoldPreview(view: HoldPreviewView, ctx: PageContext): string {
  const to = paths(ctx.base);
  const { matches } = view;
  const idle = matches?.filter((ws) => ws.nothingActs).length ?? 0;
  const body = html`<p class="lead" id="matches">${
    matches
      ? html`<strong>matches ${matches.length} workspace${matches.length === 1 ? '' : 's'}</strong>`
      : html`<strong>cannot tell what it matches</strong>`
  } <span class="muted">(<code>${view.form.pattern}</code>, ${view.listing})</span></p>
${view.problem ? html`<div class="notice warn" id="hold-problem"><p>${view.problem}</p></div>` : ''}
${idle > 0 ? html`<div class="notice warn"><p>Nothing acts on ${idle} of them: no window covers them and no pause or resume job targets them in the policy in force, so the hold changes nothing there.</p></div>` : ''}
${view.policyProblem ? html`<p class="muted">Whether anything acts on them is unknown: ${view.policyProblem}</p>` : ''}
${matches ? matchesList(matches) : ''}
${placeForm(view, ctx)}
${holdForm(ctx, view.form)}`;
  const query = new URLSearchParams(view.form);
  return page(ctx, {
    title: 'Hold preview',
    active: 'holds',
    json: `${to.api.holdPreview}?${query}`,
    generatedAt: view.generatedAt,
    body,
  });
}
