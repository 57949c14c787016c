/**
 * The edge drill (issue 21): real `nightshift scheduler` and `nightshift worker` processes (the
 * built CLI) pause a fleet of the simulator at a window's off edge, or in one split `pause` run,
 * while the drill takes Redis or a worker away under them; then the pauses are handed back (the
 * window's uptime start, or a `resume` with `onlyPausedBy`) and the drill compares what nightshift
 * recorded with what the simulator saw. Scenarios:
 *
 * - `redis-outage`: Redis (append-only) stopped with SIGTERM `outageAfterS` into the off edge,
 *   started again on the same port and data `outageS` later;
 * - `sigkill`: the worker executing the edge's run SIGKILLed `outageAfterS` into the edge and
 *   started again `restartAfterS` later;
 * - `sentinel`: Redis is a primary, a replica and three Sentinels; the primary SIGKILLed
 *   `outageAfterS` into the edge (the Sentinels promote the replica);
 * - `split-outage`: a `pause` job over more targets than NIGHTSHIFT_RUN_PART_SIZE, split into parts
 *   worked by both workers, Redis stopped for `outageS` once half its targets are done; then a
 *   `resume` of what that job owns (`nightshift run <policy> split-resume`).
 *
 * The window (`every`, `enforce: true`, `resume: owned`) covers every workgroup but `prod-*`. Its
 * off period starts at a whole minute (`edge: 'minute'`, reconciled every minute) and lasts
 * `offMinutes`; a short drill (`edge: 'soonest'`) starts it at the last whole minute instead, so
 * its edge is the first reconciliation after the scheduler starts, and the uptime starts at the
 * first whole minute at least `minOffS` after that. bench/harness/edge-drill-window.ts and
 * edge-drill-split.ts run the scenarios; edge-drill-figures.ts defines every figure;
 * edge-drill-report.ts prints them.
 */
import type { Check, PauseFigures, RunLine, VersusFigures } from './edge-drill-figures.js';
import { runSplitScenario } from './edge-drill-split.js';
import type { DrillEvent } from './edge-drill-stage.js';
import { runWindowScenario } from './edge-drill-window.js';

export const EDGE_SCENARIOS = ['redis-outage', 'sigkill', 'sentinel', 'split-outage'] as const;
export type EdgeScenario = (typeof EDGE_SCENARIOS)[number];

export interface EdgeDrillOptions {
  scenario: EdgeScenario;
  /** Workgroups in the simulated fleet (those named `prod-*`, a quarter of the seeded names, are left out); every workspace starts Active. Default 80. */
  workgroups?: number;
  /** Workspaces per workgroup. Default 50 (80 × 50: 3,000 targets). */
  workspacesPerWorkgroup?: number;
  /** The simulator's delay before every answer. Default 200 ms. */
  latencyMs?: number;
  /** How long a pause or resume takes in the simulator. Default 3000 ms. */
  transitionMs?: number;
  /** `nightshift worker` processes. Default 2. */
  workers?: number;
  /** When the fault strikes, in seconds after the edge's instant (split-outage strikes halfway through its run instead). Default 6. */
  outageAfterS?: number;
  /** How long Redis stays down (redis-outage, split-outage). Default 25. */
  outageS?: number;
  /** How long the SIGKILLed worker stays down (sigkill). Default 1. */
  restartAfterS?: number;
  /** `minute`: the off period starts at the next whole minute (reconciled every `everyS`); `soonest`: see the file's comment. Default `minute`. */
  edge?: 'minute' | 'soonest';
  /** Minutes the off period lasts (`edge: 'minute'`). Default 2. */
  offMinutes?: number;
  /** Seconds at least from the edge to the uptime start (`edge: 'soonest'`). Default 20. */
  minOffS?: number;
  /** The window's `every`, in seconds. Default 60. */
  everyS?: number;
  /** Seconds at least from the workers being ready to the edge (`edge: 'minute'`) or the pause's tick: the scheduler's start and the schedule lead. Default 8. */
  leadS?: number;
  /** The window's (or the pause job's) `concurrency`; undefined: the policy's default (16). */
  concurrency?: number | undefined;
  /** NIGHTSHIFT_LOCK_MS of every process; undefined: its default (30 s). */
  lockMs?: number | undefined;
  /** NIGHTSHIFT_RUN_PART_SIZE of the workers (split-outage). Default 500. */
  partSize?: number;
  /** NIGHTSHIFT_WORKER_CONCURRENCY of the workers; undefined: its default (50). */
  workerConcurrency?: number | undefined;
  /** How long the hand-back may take to settle after the uptime start (or the pause run's start). Default 180 s. */
  settleTimeoutS?: number;
  /** Where each process's log goes. Default: a new folder under the OS temp dir. */
  logDir?: string;
  /** Receives a line per drill event as it happens. Default: none. */
  progress?: (line: string) => void;
}

export type ResolvedEdgeOptions = Required<
  Omit<EdgeDrillOptions, 'logDir' | 'progress' | 'concurrency' | 'lockMs' | 'workerConcurrency'>
> &
  Pick<EdgeDrillOptions, 'concurrency' | 'lockMs' | 'workerConcurrency'>;

export const EDGE_DEFAULTS: Omit<ResolvedEdgeOptions, 'scenario'> = {
  workgroups: 80,
  workspacesPerWorkgroup: 50,
  latencyMs: 200,
  transitionMs: 3_000,
  workers: 2,
  outageAfterS: 6,
  outageS: 25,
  restartAfterS: 1,
  edge: 'minute',
  offMinutes: 2,
  minOffS: 20,
  everyS: 60,
  leadS: 8,
  partSize: 500,
  settleTimeoutS: 180,
};

/** What one run of a scenario found; `checks` says which goals it met. */
export interface EdgeDrillReport {
  scenario: EdgeScenario;
  options: ResolvedEdgeOptions & { fleet: string };
  startedAt: string;
  durationMs: number;
  /** os.loadavg() (1, 5, 15 min) at the start and at the end. */
  loadAverage: { start: number[]; end: number[] };
  logDir: string;
  /** The run the fault struck: the edge's run (a window) or the pause run (split-outage). */
  struckRun: string;
  /** The instant times are counted from: the off edge (a window) or the pause run's tick (split-outage). */
  zeroAt: string;
  /** What the drill did and saw, in milliseconds from `zeroAt`. */
  timeline: DrillEvent[];
  /** Workspaces the window or the pause job covers. */
  targets: number;
  /**
   * Workspaces with an accepted pause that are not Active once the hand-back settled: the
   * uptime start's reconciliations recorded and its resumes over (a window), or the `resume`
   * run finished (split-outage).
   */
  stranded: { count: number; byStatus: Record<string, number>; sample: string };
  /** split-outage: workspaces with an accepted pause the pause job did not own before the resume. */
  unowned: { count: number; sample: string } | undefined;
  pauses: PauseFigures;
  summaries: VersusFigures;
  /** The window's runs from the off period on (the summaries compared are the off period's), or the pause job's run. */
  runs: RunLine[];
  /** `nightshift drift <policy>` after the uptime start (a window), `nightshift run <policy> split-resume` (split-outage). */
  handBack: { command: string; code: number | string | null; line: string };
  /** The ledger once the hand-back settled: records of the window or pause job, and all records. */
  ledgerAfter: { owned: number; total: number };
  /**
   * Runs (and parts) started, executions (`run started` lines) in all, and the runs executed more
   * than once: how often, by which processes, when each execution started.
   */
  executions: {
    runs: number;
    executions: number;
    repeated: { run: string; count: number; processes: string; startedAt: string }[];
  };
  /** Pairs of executions of one run alive at once, and how long both made API calls meanwhile. */
  overlaps: string[];
  /** `ownership ended` lines by reason. */
  ownershipEnded: Record<string, number>;
  /** Lines logged at warn level or above, by message. */
  warnings: Record<string, number>;
  checks: Check[];
  ok: boolean;
}

export function resolveEdgeOptions(input: EdgeDrillOptions): ResolvedEdgeOptions {
  const given = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  const options = { ...EDGE_DEFAULTS, ...given } as ResolvedEdgeOptions & EdgeDrillOptions;
  delete options.logDir;
  delete options.progress;
  if (!EDGE_SCENARIOS.includes(options.scenario))
    throw new RangeError(`scenario must be one of ${EDGE_SCENARIOS.join(', ')}, got "${options.scenario}"`);
  return options;
}

/**
 * Runs one scenario and reports. Never throws for a missed goal (the report's checks say which);
 * throws only when the drill itself cannot run (no redis-server, dist/ missing, a process that
 * never starts). Every process, Redis and the simulator are stopped before it returns.
 */
export async function runEdgeDrill(input: EdgeDrillOptions): Promise<EdgeDrillReport> {
  const options = resolveEdgeOptions(input);
  const progress = input.progress ?? (() => {});
  const run = options.scenario === 'split-outage' ? runSplitScenario : runWindowScenario;
  return run(options, { logDir: input.logDir, progress });
}
