import { loadavg } from 'node:os';
import type { EdgeDrillReport, ResolvedEdgeOptions } from './edge-drill.js';
import {
  type Check,
  check,
  type notActive,
  ownedBy,
  type PauseCalls,
  pauseFigures,
  type RunLine,
  type SummariesVsSimulator,
  sample,
  versusFigures,
} from './edge-drill-figures.js';
import { logFigures } from './edge-drill-logs.js';
import type { Stage } from './edge-drill-stage.js';

/** What a scenario found, for the report every scenario gives in one shape. */
export interface Findings {
  options: ResolvedEdgeOptions;
  stage: Stage;
  began: number;
  loadStart: number[];
  struckRun: string;
  zeroAt: number;
  targets: number;
  /** Whose pauses the ledger should hold nothing of after the hand-back: the window or the pause job. */
  owner: string;
  calls: PauseCalls;
  versus: SummariesVsSimulator;
  /** What the summaries' figure counts: a window's `acted`, a job's succeeded targets. */
  said: 'acted' | 'succeeded';
  stranded: ReturnType<typeof notActive>;
  /** Accepted pauses the owner did not own before the hand-back (split-outage). */
  unowned: string[] | undefined;
  runs: RunLine[];
  handBack: EdgeDrillReport['handBack'];
  /** The scenario's own checks (the fault struck mid-run, the runs settled, the hand-back's exit), before the shared ones. */
  checks: Check[];
}

/** The report: the scenario's checks, then the goals every scenario shares. */
export async function drillReport(f: Findings): Promise<EdgeDrillReport> {
  const { options, stage, calls, versus } = f;
  const ledger = await stage.ledger.all();
  const owned = ownedBy(ledger, f.owner).length;
  const exitedOnTheirOwn = stage.processes.filter((p) => p.exitedAt() !== undefined && !p.stoppedWith());
  // what the lease promises; attributable where the two executions ran in different processes
  const bothCalling = stage.logs
    .overlaps()
    .filter((o) => (o.callsDuring?.[0] ?? 0) > 0 && (o.callsDuring?.[1] ?? 0) > 0);
  const checks: Check[] = [
    ...f.checks,
    check('no workspace stranded', f.stranded.keys.length === 0, sample(f.stranded.keys)),
    ...(f.unowned
      ? [
          check(
            `every accepted pause owned by ${f.owner} before the hand-back`,
            f.unowned.length === 0,
            sample(f.unowned),
          ),
        ]
      : []),
    check('no workspace with two accepted pauses', calls.duplicates.length === 0, sample(calls.duplicates)),
    check(
      `summaries: ${f.said} = accepted pauses`,
      versus.said === versus.accepted,
      `${versus.said} ${f.said}, ${versus.accepted} accepted`,
    ),
    check(
      'summaries name the workspaces the simulator paused',
      versus.onlyInSummaries.length === 0 && versus.onlyInSimulator.length === 0,
      `only in summaries ${versus.onlyInSummaries.length}, only in the simulator ${versus.onlyInSimulator.length}`,
    ),
    check(`the ledger holds nothing of ${f.owner} after the hand-back`, owned === 0, String(owned)),
    check(
      'no two executions of one run made API calls at once',
      bothCalling.length === 0,
      bothCalling.map((o) => o.run).join(', ') || '0',
    ),
    check(
      'no process exited unless stopped',
      exitedOnTheirOwn.length === 0,
      exitedOnTheirOwn.map((p) => p.name).join(', ') || '0',
    ),
  ];
  return {
    scenario: options.scenario,
    options: { ...options, fleet: `${options.workgroups}x${options.workspacesPerWorkgroup}` },
    startedAt: new Date(f.began).toISOString(),
    durationMs: Date.now() - f.began,
    loadAverage: { start: f.loadStart, end: loadavg() },
    logDir: stage.logDir,
    struckRun: f.struckRun,
    zeroAt: new Date(f.zeroAt).toISOString(),
    timeline: stage.events.map((e) => ({ at: e.at - f.zeroAt, what: e.what })),
    targets: f.targets,
    stranded: {
      count: f.stranded.keys.length,
      byStatus: f.stranded.byStatus,
      sample: sample(f.stranded.keys),
    },
    unowned: f.unowned && { count: f.unowned.length, sample: sample(f.unowned) },
    pauses: pauseFigures(calls),
    summaries: versusFigures(versus),
    runs: f.runs,
    handBack: f.handBack,
    ledgerAfter: { owned, total: ledger.size },
    ...logFigures(stage.logs, f.zeroAt),
    checks,
    ok: checks.every((c) => c.ok),
  };
}
