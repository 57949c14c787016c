import type { InProgressRunView, RunsView } from '../model.js';
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

/** The runs the queue holds now: each links to its page, where an operator can cancel it. */
function underWayTable(runs: readonly InProgressRunView[], base: string): Html {
  if (runs.length === 0) return html`<p class="muted" id="under-way">No run is running or queued.</p>`;
  const to = paths(base);
  const rows = runs.map(
    (run) =>
      html`<tr><td><a href="${to.run(run.runId)}"><code>${run.runId}</code></a></td><td><a href="${to.runs(run.job)}">${run.job}</a></td><td><span class="badge">${run.state}</span></td><td>${run.cancellation ? `asked by ${run.cancellation.by}${run.cancellation.reason ? `: ${run.cancellation.reason}` : ''}` : ''}</td></tr>`,
  );
  return html`<div class="table-wrap" id="under-way"><table>
<caption>Runs the queue holds now, running first; a run's page can cancel it</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Job</th><th scope="col">State</th><th scope="col">Cancel</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

/** `/runs?job=`: every kept run of one job (or of every job), newest first, none folded. */
export function renderRuns(view: RunsView, ctx: PageContext): string {
  const now = view.generatedAt;
  const title = view.job ? `Runs of ${view.job}` : 'Runs';
  const query = new URLSearchParams({ ...(view.job ? { job: view.job } : {}), limit: String(view.limit) });
  const body = html`<h2>Under way</h2>
${underWayTable(view.underWay, ctx.base)}
<h2>Finished</h2>
<p class="meta">${view.job ? html`Every run of <strong>${view.job}</strong> the history keeps, newest first. <a href="${paths(ctx.base).runs()}">Every job’s runs</a>.` : 'Every run the history keeps, newest first.'}</p>
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
