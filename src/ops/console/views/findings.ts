import type { FindingsView, OpenFindingView } from '../model.js';
import { severityBadge, span, when } from './format.js';
import { html } from './html.js';
import { type PageContext, page, paths } from './layout.js';

function row(finding: OpenFindingView, base: string, now: string) {
  const days = Math.floor((new Date(now).getTime() - new Date(finding.firstSeen).getTime()) / 86_400_000);
  const open =
    days >= 1
      ? `for ${days} day${days === 1 ? '' : 's'}`
      : `for ${span(new Date(now).getTime() - new Date(finding.firstSeen).getTime())}`;
  return html`<tr>
<td>${severityBadge(finding.severity)}</td>
<td>${finding.job}</td>
<td><code>${finding.rule}</code></td>
<td>${finding.subject}</td>
<td>${finding.message}</td>
<td class="nowrap">${when(finding.firstSeen)}<br><span class="rel">${open}</span></td>
<td class="nowrap">${when(finding.lastSeen, now)}</td>
<td><a class="mono" href="${paths(base).run(finding.runId)}">${finding.runId}</a></td>
</tr>`;
}

export function renderFindings(view: FindingsView, ctx: PageContext): string {
  const now = view.generatedAt;
  const bySeverity = (['critical', 'warning', 'info'] as const)
    .map((severity) => [severity, view.findings.filter((f) => f.severity === severity).length] as const)
    .filter(([, n]) => n > 0);
  const body =
    view.findings.length === 0
      ? html`<p>No open finding: the latest successful run of every audit reports none.</p>`
      : html`<ul class="stats" aria-label="Open findings by severity">${bySeverity.map(([severity, n]) => html`<li><strong>${n}</strong> ${severityBadge(severity)}</li>`)}</ul>
<div class="table-wrap"><table>
<caption>Findings the latest successful run of each audit still reports</caption>
<thead><tr><th scope="col">Severity</th><th scope="col">Job</th><th scope="col">Rule</th><th scope="col">Subject</th><th scope="col">Message</th><th scope="col">First seen</th><th scope="col">Last seen</th><th scope="col">Run</th></tr></thead>
<tbody>${view.findings.map((f) => row(f, ctx.base, now))}</tbody>
</table></div>`;
  return page(ctx, {
    title: 'Findings',
    active: 'findings',
    json: paths(ctx.base).api.findings,
    generatedAt: now,
    body,
  });
}
