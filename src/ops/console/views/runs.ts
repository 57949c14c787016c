import type { RunsView } from '../model.js';
import { type Html, html } from './html.js';
import { type PageContext, page, paths } from './layout.js';
import { runsTable } from './schedules.js';

/** The longest list one page asks for (`/api/runs` takes up to 500). */
const MORE = [50, 200, 500];

/** Links to the same list longer, as `?limit=` takes it. */
function moreLinks(view: RunsView, base: string): Html {
  if (view.runs.length < view.limit) return html``;
  const longer = MORE.filter((limit) => limit > view.limit);
  if (longer.length === 0)
    return html`<p class="meta">The ${view.limit} newest runs; the history keeps up to 500 per job.</p>`;
  const href = (limit: number) => {
    const query = new URLSearchParams({ ...(view.job ? { job: view.job } : {}), limit: String(limit) });
    return `${paths(base).runs()}?${query}`;
  };
  return html`<p class="meta">The ${view.limit} newest runs. Show ${longer.map((limit, i) => html`${i > 0 ? ' or ' : ''}<a href="${href(limit)}">${limit}</a>`)}.</p>`;
}

/** `/runs?job=`: every kept run of one job (or of every job), newest first, none folded. */
export function renderRuns(view: RunsView, ctx: PageContext): string {
  const now = view.generatedAt;
  const title = view.job ? `Runs of ${view.job}` : 'Runs';
  const query = new URLSearchParams({ ...(view.job ? { job: view.job } : {}), limit: String(view.limit) });
  const body = html`<p class="meta">${view.job ? html`Every run of <strong>${view.job}</strong> the history keeps, newest first. <a href="${paths(ctx.base).runs()}">Every job’s runs</a>.` : 'Every run the history keeps, newest first.'}</p>
${runsTable(
  view.runs.map((run) => ({ kind: 'run', run }) as const),
  view.job ? `The newest runs of ${view.job}` : 'The newest runs of every job',
  ctx.base,
  now,
)}
${moreLinks(view, ctx.base)}`;
  return page(ctx, {
    title,
    active: null,
    json: `${paths(ctx.base).api.runs}?${query}`,
    generatedAt: now,
    body,
  });
}
