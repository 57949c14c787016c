import type { RunSummary } from '../runs/index.js';
import { alignColumns } from './table.js';

/** A run summary for people: the counts, then one row per target. */
export function formatSummary(summary: RunSummary): string {
  const { counts } = summary;
  const head = [
    `${summary.job} (${summary.action}) ${summary.runId}: ${summary.outcome}${summary.dryRun ? ' [dry run]' : ''}`,
    `  ${counts.total} targets: ${counts.succeeded} succeeded, ${counts.skipped} skipped, ${counts.failed} failed${counts.planned ? `, ${counts.planned} planned` : ''}; ${summary.durationMs ?? 0} ms`,
  ];
  if (summary.reason) head.push(`  ${summary.reason}`);
  const rows = [['TARGET', 'OUTCOME', 'ATTEMPTS', 'DETAIL', 'REQUEST IDS']];
  for (const target of summary.targets) {
    const name = target.workspaceName
      ? `${target.workgroupName}/${target.workspaceName}`
      : (target.workgroupName ?? target.key);
    rows.push([
      name,
      target.outcome,
      String(target.attempts),
      [
        target.error?.message ?? target.reason,
        ...Object.entries(target.detail ?? {}).map(([k, v]) => `${k}=${formatValue(v)}`),
      ]
        .filter(Boolean)
        .join('; '),
      target.requestIds.join(','),
    ]);
  }
  const findings = summary.findings.map((finding) => [
    finding.severity,
    finding.rule,
    finding.subject,
    finding.message,
  ]);
  return [
    `${head.join('\n')}\n`,
    summary.targets.length > 0 ? `${alignColumns(rows)}\n` : '',
    findings.length > 0
      ? `${findings.length} finding(s):\n${alignColumns([['SEVERITY', 'RULE', 'SUBJECT', 'MESSAGE'], ...findings])}\n`
      : '',
  ].join('');
}

function formatValue(value: unknown): string {
  return value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value);
}
