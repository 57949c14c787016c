import type {
  PolicyInForceView,
  QuietRunsView,
  RecentEntry,
  RunBrief,
  ScheduleEntry,
  SchedulesView,
} from '../model.js';
import { counts, duration, outcomeBadge, relative, utc, when } from './format.js';
import { actionForm, checkbox, offers, textArea, textField } from './forms.js';
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

/** The `skip:` calendars: today called out when it is one of their dates, else the next dates. */
function skipText(entry: ScheduleEntry): Html {
  const skip = entry.skip;
  if (!skip) return html``;
  const names = skip.calendars.join(', ');
  const effect = entry.kind === 'window' ? 'no uptime' : 'no firing';
  if (skip.today)
    return html`<br><span class="badge suspended">today skipped</span> <span class="muted">${skip.today} is in ${names}: ${effect} today</span>`;
  return html`<br><span class="muted">skips ${names}${skip.upcoming.length > 0 ? `; next ${skip.upcoming.join(', ')}` : '; no date ahead'}</span>`;
}

/** When a run happened, as well as its record tells. */
function runAt(run: RunBrief): string | undefined {
  return run.finishedAt ?? run.startedAt ?? run.scheduledAt;
}

function lastRun(run: RunBrief | null, base: string, now: string): Html {
  if (!run) return html`<span class="muted">no run kept</span>`;
  return html`${outcomeBadge(run.outcome)} ${when(runAt(run), now)}<br>
<span class="muted">${duration(run.durationMs)} · ${counts(run.counts)}${run.findings > 0 ? ` · ${run.findings} finding${run.findings === 1 ? '' : 's'}` : ''}</span>${run.reason ? html`<br>${run.reason}` : ''}<br>
<a href="${paths(base).run(run.runId)}">details<span class="visually-hidden"> of run ${run.runId}</span></a> · <a href="${paths(base).runs(run.job)}">every run<span class="visually-hidden"> of ${run.job}</span></a>`;
}

/**
 * Suspend (with an optional end and reason, folded away until asked for) or unsuspend; nothing for a
 * job the policy file suspends (`suspend: true`): only an edit of the file ends that.
 */
function suspendForms(entry: ScheduleEntry, ctx: PageContext): Html {
  const to = paths(ctx.base);
  const id = (field: string) => `f-${field}-${entry.name}`;
  if (entry.suspended?.by === 'policy') return html``;
  if (entry.suspended)
    return actionForm(ctx, 'unsuspend', to.unsuspend(entry.name), {
      button: 'Unsuspend',
      label: `Unsuspend ${entry.name}`,
    });
  if (!offers(ctx, 'suspend')) return html``;
  return html`<details id="suspend-${entry.name}" class="suspend"><summary>Suspend…<span class="visually-hidden"> ${entry.name}</span></summary>
${actionForm(ctx, 'suspend', to.suspend(entry.name), {
  fields: html`<p>${textField('reason', 'Reason', { id: id('reason') })}</p>
<p>${textField('for', 'For', { placeholder: '2h, 3d (optional)', id: id('for') })}</p>
<p>${textField('until', 'or until', { placeholder: '2026-12-01T08:00:00Z', id: id('until') })}</p>`,
  button: 'Suspend',
  label: `Suspend ${entry.name}`,
})}</details>`;
}

/**
 * Run now, folded away until asked for: parameters as `key=value` lines, a reason and dry run; a
 * job only (a window reconciles on its own schedule).
 */
function runNowForm(entry: ScheduleEntry, ctx: PageContext): Html {
  if (entry.kind !== 'job' || !offers(ctx, 'run')) return html``;
  const id = (field: string) => `f-${field}-${entry.name}`;
  return html`<details id="run-${entry.name}" class="run-now"><summary>Run now…<span class="visually-hidden"> ${entry.name}</span></summary>
${actionForm(ctx, 'run', paths(ctx.base).runNow(entry.name), {
  fields: html`<p>${textArea('with', "Parameters over the job's with: (key=value, one a line; optional)", { placeholder: 'backupId=bk-1234', id: id('with') })}</p>
<p>${textField('reason', 'Reason', { id: id('run-reason') })}</p>
<p>${entry.dryRun ? html`<span class="muted">The job is a dry run: it plans, changing nothing.</span>` : checkbox('dryRun', 'Dry run: plan only, change nothing', { id: id('dry-run') })}</p>`,
  button: 'Run now',
  label: `Run ${entry.name} now`,
})}</details>`;
}

function entryRow(entry: ScheduleEntry, ctx: PageContext, now: string): Html {
  const base = ctx.base;
  const suspended = entry.suspended;
  return html`<tr>
<th scope="row" class="nowrap"><a href="${paths(base).runs(entry.name)}">${entry.name}</a><br><span class="badge tag">${entry.kind}</span>${entry.dryRun ? html` <span class="badge tag-dry">dry run</span>` : ''}</th>
<td><code>${entry.action}</code></td>
<td>${entry.target}</td>
<td>${entry.schedule}<br><span class="muted">${entry.timezone}</span>${skipText(entry)}</td>
<td class="nowrap">${nextFiring(entry, now)}</td>
<td>${suspended ? html`<span class="badge suspended">suspended</span> by ${suspended.by}<br><span class="muted">${suspended.detail}</span>` : html`<span class="muted">active</span>`}${suspendForms(entry, ctx)}</td>
<td>${lastRun(entry.lastRun, base, now)}${runNowForm(entry, ctx)}</td>
</tr>`;
}

function runRow(run: RunBrief, base: string, now: string): Html {
  return html`<tr>
<td><a class="mono" href="${paths(base).run(run.runId)}">${run.runId}</a></td>
<td><a href="${paths(base).runs(run.job)}">${run.job}</a></td>
<td>${run.trigger}${run.dryRun ? html` <span class="badge tag-dry">dry run</span>` : ''}</td>
<td>${outcomeBadge(run.outcome)}${run.takenOverFrom ? html`<br><span class="muted">taken over from ${run.takenOverFrom}</span>` : ''}</td>
<td class="nowrap">${when(runAt(run), now)}</td>
<td class="num">${duration(run.durationMs)}</td>
<td>${counts(run.counts)}</td>
<td class="num">${run.findings}</td>
<td>${run.reason ?? ''}</td>
</tr>`;
}

/** Quiet reconciliations folded into one row: how many, of which windows, over what time. */
function quietRow(quiet: QuietRunsView, base: string, now: string): Html {
  const windows = quiet.jobs.map(
    (entry, i) =>
      html`${i > 0 ? ', ' : ''}<a href="${paths(base).runs(entry.job)}">${entry.job}</a> ${entry.count}`,
  );
  const span = quiet.count === 1 ? when(quiet.to, now) : html`${when(quiet.from)} to ${when(quiet.to, now)}`;
  return html`<tr class="quiet">
<td colspan="4"><strong>${quiet.count}</strong> window reconciliation${quiet.count === 1 ? '' : 's'} that changed nothing <span class="muted">(${windows})</span>${quiet.drifting > 0 ? html`<br><span class="muted">${quiet.drifting} reported drift they leave alone</span>` : ''}</td>
<td>${span}</td>
<td colspan="4"><span class="muted">latest</span> <a class="mono" href="${paths(base).run(quiet.latest.runId)}">${quiet.latest.runId}</a></td>
</tr>`;
}

/** Runs as a table, newest first; with `caption`. */
export function runsTable(entries: readonly RecentEntry[], caption: string, base: string, now: string): Html {
  if (entries.length === 0) return html`<p class="muted">No run is kept yet.</p>`;
  const rows = entries.map((entry) =>
    entry.kind === 'run' ? runRow(entry.run, base, now) : quietRow(entry, base, now),
  );
  return html`<div class="table-wrap"><table>
<caption>${caption}</caption>
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
<tbody>${view.entries.map((entry) => entryRow(entry, ctx, now))}</tbody>
</table></div>`
      : html`<p class="muted">No job or window to show.</p>`;
  const body = html`${policyPanel(view.policy, view.problem, now)}
<h2 id="jobs">Jobs and windows</h2>
${entries}
<h2 id="recent">Recent runs</h2>
${runsTable(view.recent, 'The newest runs of every job; window reconciliations that changed nothing are folded (each job’s runs: its name)', ctx.base, now)}`;
  return page(ctx, {
    title: 'Schedules',
    active: 'schedules',
    json: paths(ctx.base).api.schedules,
    generatedAt: now,
    body,
  });
}
