import type { Finding, RunSummary, TargetRecord } from '../engine/index.js';
import { outcomeStyle, type Painter, plain, type Style, severityStyle } from './color.js';
import { alignColumns, type Cell, styled } from './table.js';

export interface SummaryViewOptions {
  /** Colours outcomes and severities. Default: no colour. */
  readonly painter?: Painter;
  /** Only targets this accepts get a row; the others are counted in one line. Default: all. */
  readonly targets?: (target: TargetRecord) => boolean;
  /**
   * Shows a target's structured details too (an update's `before` and `after`, as JSON). Default:
   * only its plain values, with a line naming what was left out (`--details`, `--json` show it).
   */
  readonly details?: boolean;
}

/** Failed targets first, the others in the summary's order: what needs acting on leads. */
function failuresFirst(targets: readonly TargetRecord[]): TargetRecord[] {
  return [
    ...targets.filter((target) => target.outcome === 'failed'),
    ...targets.filter((target) => target.outcome !== 'failed'),
  ];
}

/** Whether a detail's value is structured (an object or a list): long, and JSON to read. */
function isStructured(value: unknown): boolean {
  return value !== null && typeof value === 'object';
}

/**
 * A run summary for people: the counts, then one row per target (failed ones first), then the
 * findings.
 */
export function formatSummary(summary: RunSummary, options: SummaryViewOptions = {}): string {
  const painter = options.painter ?? plain;
  const { counts } = summary;
  // what the API's throttling cost the run: tries that waited and went again, uncounted
  const throttled = summary.targets.reduce((sum, target) => sum + (target.throttled ?? 0), 0);
  const head = [
    `${summary.job} (${summary.action}) ${summary.runId}: ${painter.paint(outcomeStyle(summary.outcome), summary.outcome)}${summary.dryRun ? ' [dry run]' : ''}`,
    `  ${counts.total} ${counts.total === 1 ? 'target' : 'targets'}: ${counts.succeeded} succeeded, ${counts.skipped} skipped, ${counts.failed} failed${counts.planned ? `, ${counts.planned} planned` : ''}; ${summary.durationMs ?? 0} ms${throttled ? `; ${throttled} throttled tries` : ''}`,
  ];
  const parameters = Object.entries(summary.parameters ?? {});
  if (parameters.length > 0)
    head.push(`  with ${parameters.map(([key, value]) => `${key}=${value}`).join(', ')}`);
  if (summary.reason) head.push(`  ${summary.reason}`);
  // the run's own error (the fleet listing refused, say) is what a person needs to act on
  if (summary.error && summary.error.message !== summary.reason) head.push(`  ${summary.error.message}`);
  const shown = failuresFirst(options.targets ? summary.targets.filter(options.targets) : summary.targets);
  const withheld = new Set<string>();
  let withheldFrom = 0;
  const rows: Cell[][] = [['TARGET', 'OUTCOME', 'ATTEMPTS', 'DETAIL', 'REQUEST IDS']];
  for (const target of shown) {
    const name = targetName(target);
    if (!options.details && Object.values(target.detail ?? {}).some(isStructured)) withheldFrom++;
    rows.push([
      name,
      styled(target.outcome, outcomeStyle(target.outcome)),
      target.throttled ? `${target.attempts} (+${target.throttled} throttled)` : String(target.attempts),
      [
        target.error?.message ?? target.reason,
        ...Object.entries(target.detail ?? {}).flatMap(([k, v]) => {
          if (options.details || !isStructured(v)) return [`${k}=${formatValue(v)}`];
          withheld.add(k);
          return [];
        }),
      ]
        .filter(Boolean)
        .join('; '),
      target.requestIds.join(','),
    ]);
  }
  const hidden = summary.targets.length - shown.length;
  return [
    `${head.join('\n')}\n`,
    shown.length > 0 ? `${alignColumns(rows, painter)}\n` : '',
    hidden > 0
      ? `  ${hidden} other target(s) not listed: nothing to change there (--json lists every one)\n`
      : '',
    withheldFrom > 0
      ? `  ${[...withheld].join(', ')} of ${withheldFrom} target(s) not shown: --details (or --json) shows them\n`
      : '',
    formatFindings(summary.findings, painter),
  ].join('');
}

/**
 * Why a run came out as it did, on one line for a table: the run's own reason (skipped, missed,
 * refused, failed as a whole) or error, else for a run whose targets failed the first failure,
 * named by its target, and how many more there are. Undefined when there is nothing to explain.
 */
export function runReason(summary: RunSummary): string | undefined {
  if (summary.reason) return summary.reason;
  if (summary.error) return summary.error.message;
  const failed = summary.targets.filter((target) => target.outcome === 'failed');
  const [first] = failed;
  if (!first) return undefined;
  const more = failed.length - 1;
  return `${targetName(first)}: ${first.error?.message ?? first.reason ?? 'failed'}${more > 0 ? `; ${more} more target(s) failed` : ''}`;
}

/**
 * Names over ids where the record has them, keeping whatever the key adds past the workspace or
 * workgroup (a backup id, a database): two targets never read alike.
 */
function targetName(target: TargetRecord): string {
  const base = target.workspaceName
    ? `${target.workgroupName}/${target.workspaceName}`
    : target.workgroupName;
  if (!base) return target.key;
  const ids = [target.workgroupId, target.workspaceName ? target.workspaceId : undefined]
    .filter(Boolean)
    .join('/');
  const rest = ids && target.key.startsWith(`${ids}/`) ? target.key.slice(ids.length) : '';
  return `${base}${rest}`;
}

function formatFindings(findings: readonly Finding[], painter: Painter): string {
  if (findings.length === 0) return '';
  const rows: Cell[][] = [
    ['SEVERITY', 'RULE', 'SUBJECT', 'MESSAGE'],
    ...findings.map((finding) => [
      styled(finding.severity, severityStyle(finding.severity)),
      finding.rule,
      finding.subject,
      finding.message,
    ]),
  ];
  return `${findings.length} finding(s):\n${alignColumns(rows, painter)}\n`;
}

const SEVERITIES = ['critical', 'warning', 'info'] as const;

/** `1 critical, 2 warning` (worst first) and the style of the worst; `-` when there are none. */
export function describeFindings(findings: readonly Finding[]): { text: string; style?: Style } {
  const parts = SEVERITIES.flatMap((severity) => {
    const count = findings.filter((finding) => finding.severity === severity).length;
    return count > 0 ? [`${count} ${severity}`] : [];
  });
  const worst = SEVERITIES.find((severity) => findings.some((finding) => finding.severity === severity));
  return parts.length > 0 ? { text: parts.join(', '), style: worst && severityStyle(worst) } : { text: '-' };
}

/** True when a plan has something to show beyond its counts: changes, failures, findings. */
export function planHasDetail(summary: RunSummary): boolean {
  return (
    summary.counts.planned > 0 ||
    summary.counts.failed > 0 ||
    summary.findings.length > 0 ||
    (summary.outcome !== 'succeeded' && summary.outcome !== 'skipped')
  );
}

/**
 * What `nightshift plan` prints: one overview row per job, then the details of only the jobs
 * that would change something, failed, or found something, listing only the targets that
 * would change or failed. A fleet of hundreds where three workspaces would be paused reads as
 * three rows, not hundreds; `--json` keeps everything.
 */
export function formatPlans(
  summaries: readonly RunSummary[],
  painter: Painter = plain,
  showDetails = false,
): string {
  const notes = summaries.map((summary) => {
    const failed = summary.outcome === 'failed' || summary.outcome === 'partial';
    return styled(summary.reason ?? (failed ? summary.outcome : ''), failed ? 'red' : undefined);
  });
  // a NOTE column only when some plan has something to say there
  const withNotes = notes.some((note) => note.text !== '');
  const head = ['JOB', 'ACTION', 'TARGETS', 'WOULD DO', 'SKIPPED', 'FAILED', 'FINDINGS'];
  const rows: Cell[][] = [withNotes ? [...head, 'NOTE'] : head];
  summaries.forEach((summary, index) => {
    const { counts } = summary;
    const findings = describeFindings(summary.findings);
    const row: Cell[] = [
      summary.job,
      summary.action,
      String(counts.total),
      styled(String(counts.planned), counts.planned > 0 ? 'cyan' : undefined),
      String(counts.skipped),
      styled(String(counts.failed), counts.failed > 0 ? 'red' : undefined),
      styled(findings.text, findings.style),
    ];
    rows.push(withNotes ? [...row, notes[index] ?? ''] : row);
  });
  const details = summaries.filter(planHasDetail).map((summary) =>
    formatSummary(summary, {
      painter,
      details: showDetails,
      targets: (target) => target.outcome === 'planned' || target.outcome === 'failed',
    }),
  );
  const footer = details.length === 0 ? '\nnothing would change, nothing failed, no findings\n' : '';
  return [`${alignColumns(rows, painter)}\n`, ...details.map((detail) => `\n${detail}`), footer].join('');
}

function formatValue(value: unknown): string {
  return value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value);
}
