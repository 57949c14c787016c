import type { EdgeDrillOptions, EdgeDrillReport, EdgeScenario } from './edge-drill.js';
import { runEdgeDrill } from './edge-drill.js';

/** The edge drill's reports as Markdown: one row per run, then each run's checks, figures and timeline. */

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const load = (l: readonly number[]) => l.map((x) => x.toFixed(2)).join(' ');
const cell = (text: string) => text.replace(/\|/g, '\\|');
const counted = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([key, n]) => `${key} ${n}`)
    .join(', ') || '0';

function countBy(keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

/** One row per run: the figures issue 21 asks for, side by side. */
export function formatRows(reports: readonly EdgeDrillReport[]): string {
  const lines = [
    '| scenario | run | stranded | workspaces with 2+ accepted pauses | pauses 200 / 400 | said vs accepted | only in summaries / only in the simulator | hand-back exit | ledger after | runs executed twice or more | executions alive at once | took | load start → end | checks |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const runs = new Map<EdgeScenario, number>();
  for (const r of reports) {
    const n = (runs.get(r.scenario) ?? 0) + 1;
    runs.set(r.scenario, n);
    const failed = r.checks.filter((c) => !c.ok).length;
    lines.push(
      `| ${r.scenario} | ${n} | **${r.stranded.count}**${r.unowned ? ` (${r.unowned.count} not owned before the resume)` : ''} | **${r.pauses.duplicates.count}** | ${r.pauses.accepted} / ${r.pauses.refused} | ${r.summaries.said} vs ${r.summaries.accepted} | ${r.summaries.onlyInSummaries.count} / ${r.summaries.onlyInSimulator.count} | ${r.handBack.code} | ${r.ledgerAfter.owned} | ${r.executions.repeated.length} | ${r.overlaps.length} | ${seconds(r.durationMs)} | ${load(r.loadAverage.start.slice(0, 1))} → ${load(r.loadAverage.end.slice(0, 1))} | ${failed === 0 ? 'ok' : `**${failed} FAILED**`} |`,
    );
  }
  return lines.join('\n');
}

/** One run in full: its settings, checks, figures, runs and timeline. */
export function formatEdgeReport(r: EdgeDrillReport): string {
  const o = r.options;
  const lines: string[] = [];
  // a window reconciled every few seconds has dozens of runs that touched nothing: counted, not listed
  const listed = (run: EdgeDrillReport['runs'][number]) =>
    run.counts.total > 0 || run.deliveries > 1 || run.runId === r.struckRun;
  const shown = r.runs.filter(listed);
  const quiet = r.runs.filter((run) => !listed(run));
  lines.push(
    `### ${r.scenario}, ${r.startedAt}`,
    '',
    `Fleet ${o.fleet} (${r.targets} targets outside prod-*), ${o.latencyMs} ms a call, ${o.transitionMs} ms a transition, ${o.workers} workers; ` +
      (r.scenario === 'split-outage'
        ? `parts of ${o.partSize}; Redis down ${o.outageS} s from halfway through the run. `
        : `every ${o.everyS} s; fault ${o.outageAfterS} s into the edge${r.scenario === 'redis-outage' ? `, Redis down ${o.outageS} s` : ''}. `) +
      `Lock ${o.lockMs ?? 'default'} ms, window/job concurrency ${o.concurrency ?? 'default'}, worker concurrency ${o.workerConcurrency ?? 'default'}. ` +
      `Took ${seconds(r.durationMs)}; load average ${load(r.loadAverage.start)} at the start, ${load(r.loadAverage.end)} at the end. Logs: ${r.logDir}`,
    '',
    '| check | result | figure |',
    '|---|---|---|',
    ...r.checks.map((c) => `| ${c.name} | ${c.ok ? 'ok' : '**FAILED**'} | ${cell(c.detail)} |`),
    '',
    '| figure | value |',
    '|---|---|',
    `| stranded (accepted pause, not Active after the hand-back) | ${r.stranded.count}${r.stranded.count ? ` (${counted(r.stranded.byStatus)}): ${r.stranded.sample}` : ''} |`,
    ...(r.unowned
      ? [`| accepted pauses the pause job did not own before the resume | ${r.unowned.sample} |`]
      : []),
    `| pause calls | ${r.pauses.accepted} accepted (${r.pauses.workspaces} workspaces${r.pauses.acceptedLate ? `, ${r.pauses.acceptedLate} in uptime` : ''}), ${r.pauses.refused} answered 400, ${r.pauses.failed} other |`,
    `| workspaces with two accepted pauses or more (no resume between) | ${r.pauses.duplicates.sample} |`,
    `| resume calls | ${r.pauses.resumes.accepted} accepted, ${r.pauses.resumes.refused} answered 400 |`,
    `| summaries vs the simulator | ${r.scenario === 'split-outage' ? 'succeeded' : 'acted'} ${r.summaries.said}, accepted ${r.summaries.accepted}; only in summaries ${r.summaries.onlyInSummaries.sample}; only in the simulator ${r.summaries.onlyInSimulator.sample} |`,
    `| hand-back | \`${cell(r.handBack.command)}\` exited ${r.handBack.code}: ${cell(r.handBack.line)} |`,
    `| ledger after the hand-back | ${r.ledgerAfter.owned} of the ${r.scenario === 'split-outage' ? 'pause job' : 'window'}, ${r.ledgerAfter.total} in all |`,
    `| executions | ${r.executions.executions} of ${r.executions.runs} runs and parts; more than once: ${r.executions.repeated.map((e) => `${e.run} ×${e.count} (${e.processes}; started ${e.startedAt})`).join('; ') || 'none'} |`,
    `| executions of one run alive at once | ${cell(r.overlaps.join('; ')) || 'none'} |`,
    `| ownership ended (log lines, by reason) | ${counted(r.ownershipEnded)} |`,
    `| warnings and errors logged | ${cell(counted(Object.fromEntries(Object.entries(r.warnings).slice(0, 8))))} |`,
    '',
    '| run | period | outcome | trigger | targets (ok / skipped / failed) | acted | deliveries | taken over from |',
    '|---|---|---|---|---|---|---|---|',
    ...shown.map(
      (run) =>
        `| ${run.runId} | ${run.period ?? '—'} | ${run.outcome} | ${run.trigger} | ${run.counts.total} (${run.counts.succeeded} / ${run.counts.skipped} / ${run.counts.failed}) | ${run.acted ?? '—'} | ${run.deliveries} | ${run.takenOverFrom ?? '—'} |`,
    ),
    ...(quiet.length > 0
      ? [
          `| and ${quiet.length} more with no target (${counted(countBy(quiet.map((run) => `${run.period ?? ''} ${run.outcome}`.trim())))}) | | | | | | | |`,
        ]
      : []),
    '',
    `Timeline (from ${r.zeroAt}): ${r.timeline.map((e) => `${e.at >= 0 ? '+' : ''}${seconds(e.at)} ${e.what}`).join('; ')}`,
  );
  return lines.join('\n');
}

export interface EdgeSeries {
  reports: EdgeDrillReport[];
  /** The rows of every run, then each run in full. */
  text: string;
  ok: boolean;
}

/** Runs each scenario `repeat` times, one run at a time, and reports them all. */
export async function runEdgeDrills(
  scenarios: readonly EdgeScenario[],
  repeat: number,
  options: Omit<EdgeDrillOptions, 'scenario'>,
): Promise<EdgeSeries> {
  const reports: EdgeDrillReport[] = [];
  for (const scenario of scenarios) {
    for (let i = 1; i <= repeat; i++) {
      options.progress?.(`edge drill: ${scenario}, run ${i} of ${repeat}`);
      const report = await runEdgeDrill({ ...options, scenario });
      reports.push(report);
      options.progress?.(
        `edge drill: ${scenario} run ${i}: ${report.ok ? 'ok' : 'FAILED'} in ${seconds(report.durationMs)}`,
      );
    }
  }
  const text = [
    '## Edge drill',
    '',
    formatRows(reports),
    '',
    ...reports.map(formatEdgeReport).join('\n\n').split('\n'),
  ].join('\n');
  return { reports, text, ok: reports.every((r) => r.ok) };
}
