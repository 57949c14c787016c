import type { PolicyInForceView, RunBrief, ScheduleEntry, SchedulesView } from '../model.js';
import { counts, duration, outcomeBadge, relative, utc, when } from './format.js';
import { type Html, html } from './html.js';
import { type PageContext, page, paths } from './layout.js';

function shortSha(sha: string): string {
  return sha.slice(0, 12);
}

function policyPanel(policy: PolicyInForceView | null, problem: string | null, now: string): Html {
  if (!policy) {
    return html`<div class="notice info"><h2>No policy recorded yet</h2><p>No scheduler has recorded a policy in this Redis (under this prefix). Start <code>nightshift start</code> or <code>nightshift scheduler</code> with a policy.</p></div>`;
  }
  const rejected = policy.rejected;
  return html`<dl class="facts" aria-label="Policy in force">
<dt>Policy in force</dt><dd><code title="${policy.sha}">${shortSha(policy.sha)}</code></dd>
<dt>Loaded</dt><dd>${when(policy.loadedAt, now)} on <code>${policy.host}</code></dd>
</dl>
${
  rejected
    ? html`<section class="notice bad" aria-labelledby="rejected-title">
<h2 id="rejected-title">⚠ The last edit of the policy was rejected</h2>
<p>Edit <code title="${rejected.sha}">${shortSha(rejected.sha)}</code> was refused ${when(rejected.at, now)} on <code>${rejected.host}</code>; policy <code>${shortSha(policy.sha)}</code> stays in force.</p>
${rejected.problems.length > 0 ? html`<ul class="problems">${rejected.problems.map((p) => html`<li>${p}</li>`)}</ul>` : ''}
${rejected.error ? html`<p>${rejected.error}</p>` : ''}
</section>`
    : ''
}
${problem ? html`<div class="notice warn"><h2>The schedules cannot be shown</h2><p>${problem}</p></div>` : ''}`;
}

function nextFiring(entry: ScheduleEntry, now: string): Html {
  const next = entry.next;
  if (!next)
    return html`<span class="muted">${entry.suspended ? 'not while suspended' : 'never again'}</span>`;
  return html`<time datetime="${next.at}">${next.local} <span class="muted">${next.timezone}</span></time><br><span class="muted">${utc(next.at)}</span> <span class="rel">(${relative(next.at, now)})</span>${next.edge ? html`<br>${next.edge}` : ''}`;
}

/** When a run happened, as well as its record tells. */
function runAt(run: RunBrief): string | undefined {
  return run.finishedAt ?? run.startedAt ?? run.scheduledAt;
}

function lastRun(run: RunBrief | null, base: string, now: string): Html {
  if (!run) return html`<span class="muted">no run kept</span>`;
  return html`${outcomeBadge(run.outcome)} ${when(runAt(run), now)}<br>
<span class="muted">${duration(run.durationMs)} · ${counts(run.counts)}${run.findings > 0 ? ` · ${run.findings} finding${run.findings === 1 ? '' : 's'}` : ''}</span>${run.reason ? html`<br>${run.reason}` : ''}<br>
<a href="${paths(base).run(run.runId)}">details<span class="visually-hidden"> of run ${run.runId}</span></a>`;
}

function entryRow(entry: ScheduleEntry, base: string, now: string): Html {
  const suspended = entry.suspended;
  return html`<tr>
<th scope="row" class="nowrap">${entry.name}<br><span class="badge tag">${entry.kind}</span>${entry.dryRun ? html` <span class="badge tag-dry">dry run</span>` : ''}</th>
<td><code>${entry.action}</code></td>
<td>${entry.target}</td>
<td>${entry.schedule}<br><span class="muted">${entry.timezone}</span></td>
<td class="nowrap">${nextFiring(entry, now)}</td>
<td>${suspended ? html`<span class="badge suspended">suspended</span> by ${suspended.by}<br><span class="muted">${suspended.detail}</span>` : html`<span class="muted">active</span>`}</td>
<td>${lastRun(entry.lastRun, base, now)}</td>
</tr>`;
}

export function recentRunsTable(runs: readonly RunBrief[], base: string, now: string): Html {
  if (runs.length === 0) return html`<p class="muted">No run is kept yet.</p>`;
  const rows = runs.map(
    (run) => html`<tr>
<td><a class="mono" href="${paths(base).run(run.runId)}">${run.runId}</a></td>
<td>${run.job}</td>
<td>${run.trigger}${run.dryRun ? html` <span class="badge tag-dry">dry run</span>` : ''}</td>
<td>${outcomeBadge(run.outcome)}${run.takenOverFrom ? html`<br><span class="muted">taken over from ${run.takenOverFrom}</span>` : ''}</td>
<td class="nowrap">${when(runAt(run), now)}</td>
<td class="num">${duration(run.durationMs)}</td>
<td>${counts(run.counts)}</td>
<td class="num">${run.findings}</td>
<td>${run.reason ?? ''}</td>
</tr>`,
  );
  return html`<div class="table-wrap"><table>
<caption>The newest runs of every job</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Job</th><th scope="col">Trigger</th><th scope="col">Outcome</th><th scope="col">When</th><th scope="col" class="num">Duration</th><th scope="col">Targets</th><th scope="col" class="num">Findings</th><th scope="col">Reason</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

export function renderSchedules(view: SchedulesView, ctx: PageContext): string {
  const now = view.generatedAt;
  const entries =
    view.entries.length > 0
      ? html`<div class="table-wrap"><table>
<caption>Every job and window of the policy in force</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Schedule</th><th scope="col">Next firing</th><th scope="col">Status</th><th scope="col">Last run</th></tr></thead>
<tbody>${view.entries.map((entry) => entryRow(entry, ctx.base, now))}</tbody>
</table></div>`
      : html`<p class="muted">No job or window to show.</p>`;
  const body = html`${policyPanel(view.policy, view.problem, now)}
<h2 id="jobs">Jobs and windows</h2>
${entries}
<h2 id="recent">Recent runs</h2>
${recentRunsTable(view.recent, ctx.base, now)}`;
  return page(ctx, {
    title: 'Schedules',
    active: 'schedules',
    json: paths(ctx.base).api.schedules,
    generatedAt: now,
    body,
  });
}
