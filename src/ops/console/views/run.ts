import {
  describeCancellation,
  type ErrorRecord,
  type Finding,
  type TargetRecord,
} from '../../../engine/index.js';
import type { InProgressRunView, RunDetailView } from '../model.js';
import { counts, duration, outcomeBadge, severityBadge, when } from './format.js';
import { actionForm, textField } from './forms.js';
import { type Html, html } from './html.js';
import { type PageContext, page, paths, renderedAt } from './layout.js';

/** Request IDs as a list a person can copy from. */
function requestIds(ids: readonly string[]): Html {
  if (ids.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul class="ids">${ids.map((id) => html`<li>${id}</li>`)}</ul>`;
}

/** An error as a summary keeps it: `Internal-Error (500), request ID 7f3…: message`. */
function errorText(error: ErrorRecord): Html {
  const kind = [error.type, error.status === undefined ? undefined : String(error.status)].filter(Boolean);
  return html`${kind.length > 0 ? html`<strong>${kind.join(' ')}</strong>: ` : ''}${error.message}${
    error.requestId ? html` <span class="muted">(request ID <code>${error.requestId}</code>)</span>` : ''
  }${error.retryable === undefined ? '' : html` <span class="muted">${error.retryable ? 'transient' : 'permanent'}</span>`}`;
}

/** A target by name, a workspace linked to its timeline. */
function targetName(target: TargetRecord, base: string): Html {
  const workgroup = target.workgroupName ?? target.workgroupId;
  const workspace = target.workspaceName ?? target.workspaceId;
  if (!workgroup && !workspace) return html`<code>${target.key}</code>`;
  const name =
    workspace && target.workgroupId && target.workspaceId
      ? html`<a href="${paths(base).workspace(target.workgroupId, target.workspaceId)}"><strong>${workspace}</strong></a>`
      : html`<strong>${workspace}</strong>`;
  return html`${workgroup ?? ''}${workspace ? html` / ${name}` : ''}<br><span class="muted mono">${target.key}</span>`;
}

/** A run over the whole fleet has 10,000 targets: past this many the page lists a part, the JSON all. */
export const TARGETS_TABLE_LIMIT = 500;

/** The targets listed: all of them, or, past the limit, those that did not succeed first. */
function listedTargets(targets: readonly TargetRecord[]): readonly TargetRecord[] {
  if (targets.length <= TARGETS_TABLE_LIMIT) return targets;
  const notSucceeded = targets.filter((t) => t.outcome !== 'succeeded');
  const succeeded = targets.filter((t) => t.outcome === 'succeeded');
  return [...notSucceeded, ...succeeded].slice(0, TARGETS_TABLE_LIMIT);
}

function targetsTable(targets: readonly TargetRecord[], json: string, base: string): Html {
  if (targets.length === 0) return html`<p class="muted">The run had no target.</p>`;
  const listed = listedTargets(targets);
  const rows = listed.map(
    (t) => html`<tr>
<th scope="row">${targetName(t, base)}</th>
<td>${outcomeBadge(t.outcome)}</td>
<td class="num">${t.attempts}${t.throttled ? html`<br><span class="muted">+${t.throttled} throttled</span>` : ''}</td>
<td>${t.reason ?? ''}${t.reason && t.error ? html`<br>` : ''}${t.error ? errorText(t.error) : ''}</td>
<td>${requestIds(t.requestIds)}</td>
<td class="num">${duration(t.durationMs)}</td>
</tr>`,
  );
  return html`<div class="table-wrap"><table>
<caption>${
    listed.length < targets.length
      ? html`${listed.length} of ${targets.length} targets, those that did not succeed first; <a href="${json}">the JSON</a> has every one with its request IDs`
      : `${targets.length} target${targets.length === 1 ? '' : 's'}`
  }</caption>
<thead><tr><th scope="col">Target</th><th scope="col">Outcome</th><th scope="col" class="num">Attempts</th><th scope="col">Reason or error</th><th scope="col">Request IDs</th><th scope="col" class="num">Duration</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

export function findingsRows(findings: readonly Finding[]): Html {
  return html`${findings.map(
    (f) =>
      html`<tr><td>${severityBadge(f.severity)}</td><td><code>${f.rule}</code></td><td>${f.subject}</td><td>${f.message}</td></tr>`,
  )}`;
}

function findingsTable(findings: readonly Finding[]): Html {
  if (findings.length === 0) return html`<p class="muted">No finding.</p>`;
  return html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Severity</th><th scope="col">Rule</th><th scope="col">Subject</th><th scope="col">Message</th></tr></thead>
<tbody>${findingsRows(findings)}</tbody>
</table></div>`;
}

/** Evidence: top-level fields as a definition list, each value as JSON. */
function evidenceList(evidence: Record<string, unknown>): Html {
  return html`<dl class="facts">${Object.entries(evidence).map(
    ([key, value]) =>
      html`<dt>${key}</dt><dd>${
        typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : html`<pre class="json">${JSON.stringify(value, null, 2)}</pre>`
      }</dd>`,
  )}</dl>`;
}

function summary(run: RunDetailView, now: string): Html {
  return html`<dl class="facts">
<dt>Job</dt><dd>${run.job}</dd>
<dt>Action</dt><dd><code>${run.action}</code></dd>
<dt>Trigger</dt><dd>${run.trigger}</dd>
<dt>Dry run</dt><dd>${run.dryRun ? 'yes: nothing was changed' : 'no'}</dd>
${run.parameters ? html`<dt>Parameters</dt><dd>${Object.entries(run.parameters).map(([key, value]) => html`<code>${key}=${value}</code> `)}</dd>` : ''}
<dt>Outcome</dt><dd>${outcomeBadge(run.outcome)} <span class="muted">${counts(run.counts)}</span></dd>
${run.reason ? html`<dt>Reason</dt><dd>${run.reason}</dd>` : ''}
${run.error ? html`<dt>Error</dt><dd>${errorText(run.error)}</dd>` : ''}
<dt>Scheduled for</dt><dd>${run.scheduledAt ? when(run.scheduledAt, now) : html`<span class="muted">manual run</span>`}</dd>
<dt>Started</dt><dd>${when(run.startedAt, now)}</dd>
<dt>Finished</dt><dd>${when(run.finishedAt, now)}</dd>
<dt>Duration</dt><dd>${duration(run.durationMs)}</dd>
${run.deliveries !== undefined ? html`<dt>Deliveries</dt><dd>${run.deliveries}</dd>` : ''}
${run.takenOverFrom ? html`<dt>Taken over</dt><dd>taken over from <code>${run.takenOverFrom}</code></dd>` : ''}
<dt>Run request IDs</dt><dd>${requestIds(run.requestIds)}</dd>
</dl>`;
}

/**
 * A run waiting for approval: who may decide and until when, what changed since an earlier
 * approval, and (for an approver) the forms. The plan itself is the targets table below.
 */
function approvalBox(run: RunDetailView, ctx: PageContext): Html {
  const { approval } = run;
  if (run.outcome !== 'awaiting-approval' || approval?.state !== 'pending') return html``;
  const to = paths(ctx.base);
  const who = approval.approvers.length > 0 ? approval.approvers.join(', ') : 'any approver';
  const note = (verb: string) =>
    html`<p>${textField('note', `${verb} note`, { placeholder: 'why (optional)', id: `${verb.toLowerCase()}-note` })}</p>`;
  return html`<section class="notice info" id="approval"><h2>Awaiting approval</h2>
<p>Round ${approval.round}: ${who} may approve it until ${approval.expiresAt}. Its plan is the targets marked <code>planned</code> below; approved, it acts only if its plan then asks for nothing more.</p>
${approval.changedSince ? html`<p><strong>Changed since it was approved:</strong></p><ul>${approval.changedSince.map((change) => html`<li>${change}</li>`)}</ul>` : ''}
${actionForm(ctx, 'approve', to.approve(run.runId), { fields: note('Approval'), button: 'Approve this plan', label: 'approve' })}
${actionForm(ctx, 'reject', to.reject(run.runId), { fields: note('Rejection'), button: 'Reject', label: 'reject' })}
</section>`;
}

export function renderRun(view: RunDetailView | undefined, runId: string, ctx: PageContext): string {
  const to = paths(ctx.base);
  const now = renderedAt(ctx);
  if (!view) {
    return page(ctx, {
      title: `Run ${runId}`,
      active: null,
      json: to.api.run(runId),
      generatedAt: now,
      body: html`<div class="notice warn"><h2>Run not kept (expired or never recorded)</h2>
<p>No summary of run <code>${runId}</code> is kept in Redis: its history entry expired, or no run of that id was recorded.</p>
<p><a href="${to.schedules}#recent">Recent runs</a></p></div>`,
    });
  }
  const body = html`<p class="meta">Run <code>${view.runId}</code></p>
${summary(view, now)}
${approvalBox(view, ctx)}
<h2 id="targets">Targets</h2>
${targetsTable(view.targets, to.api.run(view.runId), ctx.base)}
<h2 id="findings">Findings</h2>
${findingsTable(view.findings)}
${view.evidence && Object.keys(view.evidence).length > 0 ? html`<h2 id="evidence">Evidence</h2>${evidenceList(view.evidence)}` : ''}`;
  return page(ctx, {
    title: `Run of ${view.job}`,
    active: null,
    json: to.api.run(view.runId),
    generatedAt: now,
    body,
  });
}

/** A run still queued or running: what it is, a cancel asked for, and the form to ask for one. */
export function renderRunInProgress(view: InProgressRunView, ctx: PageContext): string {
  const to = paths(ctx.base);
  const now = renderedAt(ctx);
  const cancel = view.cancellation
    ? html`<div class="notice info" id="cancelling"><p>${describeCancellation(view.cancellation)}: it starts no new target, and ends <code>cancelled</code> once those under way finish their step.</p></div>`
    : actionForm(ctx, 'cancel', to.cancel(view.runId), {
        fields: html`<p>${textField('reason', 'Reason', { placeholder: 'why (optional)' })}</p>`,
        button: 'Cancel this run',
      });
  return page(ctx, {
    title: `Run of ${view.job}`,
    active: null,
    json: to.api.run(view.runId),
    generatedAt: now,
    body: html`<p class="meta">Run <code>${view.runId}</code></p>
<dl class="facts">
<dt>Job</dt><dd><a href="${to.runs(view.job)}">${view.job}</a></dd>
<dt>State</dt><dd><span class="badge" id="run-state">${view.state}</span> <span class="muted">its summary is written when it ends</span></dd>
</dl>
${cancel}`,
  });
}
