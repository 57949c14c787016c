/**
 * The chaos drill: a fleet pause/resume cycle run by real `nightshift scheduler` and `nightshift
 * worker` processes (the built CLI, `node bin/nightshift.js`) against the simulator with faults,
 * while the drill SIGKILLs a worker every few seconds and starts it again, restarts Redis once
 * (append-only on, same port and data folder) and kills and restarts a scheduler. Then it stops
 * the chaos and the simulator's 500s and hangs (its throttle stays), lets one last tick run in
 * quiet, and reports what ran, what was lost or duplicated, what the retries cost, how long each
 * kill took to recover from, and which state the fleet ended in.
 *
 * `runChaosDrill(options)` is used by test/chaos/drill.test.ts (a short drill inside `npm test`)
 * and by bench/chaos-drill.ts (`npm run chaos`, full size). Both need `npm run build` first.
 * Its parts are beside it: chaos-drill-stage.ts (Redis, the simulator, the drill's clients),
 * chaos-drill-processes.ts and chaos-drill-observed.ts (the processes and what their logs say),
 * chaos-drill-faults.ts (the chaos), chaos-drill-quiet.ts (the quiet end) and
 * chaos-drill-report.ts (the figures and goals).
 *
 * Definitions the report uses:
 * - expected runs: every tick of the two jobs from the first tick the first scheduler announced
 *   (its `scheduler started` line) to the last tick, the quiet one, inclusive;
 * - executed: ticks whose run summary is in the run history (RunHistory, read from Redis) with
 *   an outcome of a run that started (`succeeded`, `partial` or `failed`);
 * - lost: expected ticks without such a summary (none at all, or only `missed`/`skipped`);
 * - duplicated, by run and by side effect, never by parts of one run: a tick with more than one
 *   summary; two executions of one run (or of one part of a split run, NIGHTSHIFT_RUN_PART_SIZE)
 *   with API calls in flight at the same time, by their `api call` lines (sent `durationMs`
 *   before the line); an accepted pause or resume that repeats the workspace's previous accepted
 *   call (the simulator's log). An execution that stopped (its lease ran out, or at shutdown) and
 *   the next one resuming the run may both be alive a moment, and a redelivered part that finds
 *   all its targets checkpointed ends at once: only calls are evidence of acting;
 * - never two runs of a job at once (overlap: queue): a run acts from its first API call's
 *   sending to its last call's answer, over all its executions and parts;
 * - retries spent: the sum of (attempts - 1) over the target records of every summary, and the
 *   sum of (deliveries - 1) over the summaries (runs redelivered after a kill);
 * - time to recover after a kill: for each run the killed worker was executing (it had logged
 *   `run started` for it and not `run finished`), from the SIGKILL to the `run started` of that
 *   run by another worker; a kill's recovery is the longest over its runs. A kill of a worker
 *   that was executing nothing affects no run: its recovery is "idle".
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { actionRegistry } from '../../jobs/index.js';
import { type PolicyJob, parsePolicy } from '../../src/policy/index.js';
import type { FaultConfigInput } from '../../src/sim/index.js';
import { Prng } from '../../src/sim/random.js';
import { redisKeys } from '../../src/store/keys.js';
import { runChaos } from './chaos-drill-faults.js';
import { Observed } from './chaos-drill-observed.js';
import { quietEnd } from './chaos-drill-quiet.js';
import { chaosReport } from './chaos-drill-report.js';
import { type ChaosStage, openChaosStage } from './chaos-drill-stage.js';
import { assertBuilt } from './nightshift-process.js';

export interface ChaosDrillOptions {
  /** Workgroups in the simulated fleet; every workspace starts Active. Default 20. */
  workgroups?: number;
  /** Workspaces per workgroup. Default 10. */
  workspacesPerWorkgroup?: number;
  /**
   * Seconds from a pause tick to the next resume tick and on to the next pause; twice it must
   * divide 60 (5, 6, 10, 15 or 30). Default 10: pause at :00, :20, :40, resume at :10, :30, :50.
   */
  tickSeconds?: number;
  /** How long the chaos goes on, from the first tick. Default 40 000 ms. */
  chaosMs?: number;
  /** Mean time between two worker kills (each gap drawn within ±25 %). Default 12 000 ms. */
  killEveryMs?: number;
  /** Which worker a kill hits: one executing a run whenever there is one (`busy`), or any (`any`). Default `busy`. */
  victims?: 'busy' | 'any';
  /** How long a killed worker or scheduler stays down before it is started again. Default 1000 ms. */
  restartAfterMs?: number;
  /** When Redis is restarted, as a fraction of the chaos; null for never. Default 0.4. */
  redisRestartAt?: number | null;
  /** How long Redis stays down when it is restarted (SIGTERM, then started on the same port and data). Default 1500 ms. */
  redisDownMs?: number;
  /** When a scheduler is SIGKILLed and started again, as a fraction of the chaos; null for never. Default 0.7. */
  schedulerRestartAt?: number | null;
  /** Worker processes. Default 3. */
  workers?: number;
  /** Scheduler processes. Default 2. */
  schedulers?: number;
  /** The simulator's faults; its 500s, drops and hangs end with the chaos. Default 5 % 500s, 2 % hangs, a 100 req/s throttle. */
  faults?: FaultConfigInput;
  /** Duration of a pause or resume in the simulator. Default 300 ms. */
  transitionMs?: number;
  /** The jobs' `concurrency` (API calls in parallel within a run). Default 20. */
  concurrency?: number;
  /** NIGHTSHIFT_LOCK_MS of the workers: how soon a killed worker's run moves on. Default 4000 ms. */
  lockMs?: number;
  /**
   * NIGHTSHIFT_MAX_STALLS of the workers: how many times a run may lose its worker before it is
   * failed as abandoned. Default 5, the workers' own default.
   */
  maxStalls?: number;
  /** NIGHTSHIFT_POLL_INTERVAL_MS of the workers (resume's wait for Active). Default 500 ms. */
  pollIntervalMs?: number;
  /**
   * NIGHTSHIFT_RUN_PART_SIZE of the workers: a run over more workspaces is split into parts that
   * every worker works. Default 500, the workers' own default.
   */
  partSize?: number;
  /** NIGHTSHIFT_API_TIMEOUT_MS of the workers: what a hanging request costs. Default 2000 ms. */
  apiTimeoutMs?: number;
  /** The jobs' `retry.attempts` (fixed 1 s backoff, at least the server's Retry-After). Default 30. */
  retryAttempts?: number;
  /** The jobs' `overlap`. Default `queue`: every tick runs, so executed must equal expected. */
  overlap?: 'queue' | 'skip';
  /** Seed of the kill schedule, the victims and the simulator's faults. Default 1. */
  seed?: number;
  /** How long the end may take: earlier ticks' runs, the quiet tick's run, the last transitions. Default 120 000 ms. */
  settleTimeoutMs?: number;
  /** Where each process's log goes (one file per process). Default: a new folder under the OS temp dir. */
  logDir?: string;
  /** Receives a line per drill event as it happens. Default: none. */
  progress?: (line: string) => void;
}

export type ResolvedChaosOptions = Required<Omit<ChaosDrillOptions, 'progress' | 'logDir' | 'faults'>> & {
  faults: FaultConfigInput;
};

const DEFAULTS: ResolvedChaosOptions = {
  workgroups: 20,
  workspacesPerWorkgroup: 10,
  tickSeconds: 10,
  chaosMs: 40_000,
  killEveryMs: 12_000,
  victims: 'busy',
  restartAfterMs: 1_000,
  redisRestartAt: 0.4,
  redisDownMs: 1_500,
  schedulerRestartAt: 0.7,
  workers: 3,
  schedulers: 2,
  faults: { errorRate: 0.05, hangRate: 0.02, throttleRps: 100 },
  transitionMs: 300,
  concurrency: 20,
  lockMs: 4_000,
  maxStalls: 5,
  pollIntervalMs: 500,
  partSize: 500,
  apiTimeoutMs: 2_000,
  retryAttempts: 30,
  overlap: 'queue',
  seed: 1,
  settleTimeoutMs: 120_000,
};

/** One SIGKILL of a worker, and what it cost. */
export interface KillRecord {
  /** Milliseconds since the first tick. */
  atMs: number;
  /** The process killed, e.g. `worker-2#1` (slot 2, first restart). */
  instance: string;
  /** Runs it was executing. */
  runs: string[];
  /** From the SIGKILL to the last of those runs started again by another worker; undefined when idle or never. */
  recoveryMs: number | undefined;
  /** Runs among `runs` that no worker started again. */
  unrecovered: string[];
  /** From the SIGKILL to the replacement process logging `worker started`. */
  replacementReadyMs: number | undefined;
}

export interface RestartRecord {
  what: 'redis' | 'scheduler';
  atMs: number;
  /** Redis: from the stop to listening again; scheduler: from the SIGKILL to its replacement's `scheduler started`. */
  downMs: number;
  /** Redis: from the stop to the last process logging `Redis connection restored`. */
  reconnectedMs?: number | undefined;
  detail?: string;
}

export interface Goal {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ChaosDrillReport {
  options: ResolvedChaosOptions & { fleet: string };
  startedAt: string;
  durationMs: number;
  /** os.loadavg() (1, 5, 15 min) at the start and at the end. */
  loadAverage: { start: number[]; end: number[] };
  logDir: string;
  ticks: {
    expected: number;
    executed: number;
    lost: string[];
    duplicated: string[];
    /** Summaries for ticks after the last expected one (should be none). */
    unexpected: string[];
    outcomes: Record<string, number>;
    catchUps: number;
    firstTick: string;
    lastTick: string;
    lastAction: string;
  };
  targets: {
    records: number;
    succeeded: number;
    skipped: number;
    failed: number;
    /**
     * Of the failed, resume targets the other job's run paused again while the resume waited for
     * them (a pause and a resume run at once, see `overlappingRuns`): the drill's own schedule
     * did that, not a fault of the engine; the end state is judged after a quiet tick.
     */
    reversed: number;
    /** Why targets were skipped, with counts (e.g. `already Active`, `not Active: Resuming`). */
    skipReasons: Record<string, number>;
    /**
     * Pairs of a pause run and a resume run that were executing at the same time (a run slowed
     * down by kills running into the other job's next tick): their targets may be skipped as
     * mid-transition, which is why the end state is judged after a last tick run in quiet.
     */
    overlappingRuns: number;
    /** Pairs of runs of one job whose first starts came out of tick order (queued runs take turns in no set order). */
    outOfTickOrder: number;
  };
  desiredState: { expected: string; total: number; inState: number; percent: number; notInState: string[] };
  retries: {
    /** Sum of (attempts - 1) over target records. */
    targetRetries: number;
    /** Sum of (deliveries - 1) over run summaries. */
    redeliveries: number;
    /** Runs delivered more than once. */
    runsRedelivered: number;
  };
  api: {
    calls: number;
    injected: { error: number; hang: number; throttle: number; drop: number };
    pauses: number;
    resumes: number;
    /** Pause/resume calls refused because the workspace was already there (a redundant call). */
    refusedAsAlreadyDone: number;
    /** Two accepted mutations of one kind in a row on one workspace (a duplicated effect). */
    doubleMutations: number;
  };
  kills: KillRecord[];
  restarts: RestartRecord[];
  /** Processes that exited without the drill stopping them. */
  unexpectedExits: string[];
  /** Lines logged at error level or above, by message (the first few). */
  errorLines: Record<string, number>;
  /** Runs BullMQ holds as failed (e.g. stalled too often), with the reason. */
  bullFailed: string[];
  goals: Goal[];
  ok: boolean;
}

/** Throws unless `npm run build` has run since any source last changed: the processes run the built CLI. */
export function assertDistFresh(): void {
  assertBuilt();
}

/** The drill's policy: a pause and a resume of every workspace, alternating every `tickSeconds`. */
export function drillPolicy(
  options: Pick<ResolvedChaosOptions, 'tickSeconds' | 'concurrency' | 'retryAttempts' | 'overlap'>,
): string {
  const step = options.tickSeconds;
  if (!Number.isInteger(step) || step < 1 || 60 % (2 * step) !== 0)
    throw new RangeError(`tickSeconds: twice it must divide 60, got ${step}`);
  const pauses: number[] = [];
  const resumes: number[] = [];
  for (let second = 0; second < 60; second += 2 * step) {
    pauses.push(second);
    resumes.push(second + step);
  }
  return `version: 1
defaults:
  timezone: UTC
  retry: { attempts: ${options.retryAttempts}, backoff: 1s, strategy: fixed }
  overlap: ${options.overlap}
  concurrency: ${options.concurrency}
  timeout: 10m
targets:
  fleet: { workgroups: ["*"] }
jobs:
  drill-pause:
    schedule: "${pauses.join(',')} * * * * *"
    action: pause
    target: fleet
  drill-resume:
    schedule: "${resumes.join(',')} * * * * *"
    action: resume
    target: fleet
    with: { waitReady: 2m }
`;
}
/**
 * Starts the workers, then the schedulers (workers first, so the first tick finds them waiting);
 * the first tick is the earliest any scheduler announced for any job.
 */
async function startProcesses({
  options,
  stage,
  observed,
  jobs,
  progress,
}: {
  options: ResolvedChaosOptions;
  stage: ChaosStage;
  observed: Observed;
  jobs: Map<string, PolicyJob>;
  progress: (line: string) => void;
}): Promise<{ firstByJob: Map<string, number>; firstTick: number }> {
  const { processes } = stage;
  const initialWorkers = Array.from({ length: options.workers }, (_, i) => processes.start('worker', i + 1));
  await Promise.all(initialWorkers.map((p) => processes.ready(p, 'worker started')));
  const initialSchedulers = Array.from({ length: options.schedulers }, (_, i) =>
    processes.start('scheduler', i + 1),
  );
  await Promise.all(initialSchedulers.map((p) => processes.ready(p, 'scheduler started')));
  const firstByJob = new Map<string, number>();
  for (const started of observed.schedulerStarts) {
    for (const { job, next } of started.jobs) {
      if (!next) continue;
      const at = Date.parse(next);
      firstByJob.set(job, Math.min(firstByJob.get(job) ?? Number.POSITIVE_INFINITY, at));
    }
  }
  if (firstByJob.size !== jobs.size)
    throw new Error(`schedulers announced ${firstByJob.size} jobs, expected ${jobs.size}`);
  const firstTick = Math.min(...firstByJob.values());
  progress(
    `${options.workers} workers and ${options.schedulers} schedulers up; first tick ${new Date(firstTick).toISOString()}`,
  );
  return { firstByJob, firstTick };
}

/**
 * Runs the drill and reports. Never throws for a failed goal (the report says which); throws
 * only when the drill itself cannot run (no redis-server, dist/ missing, a process that never
 * starts). Every process, Redis and the simulator are stopped before it returns.
 */
export async function runChaosDrill(input: ChaosDrillOptions = {}): Promise<ChaosDrillReport> {
  const options: ResolvedChaosOptions = { ...DEFAULTS, ...stripUndefined(input) } as ResolvedChaosOptions;
  const progress = input.progress ?? (() => {});
  const began = Date.now();
  const loadStart = loadavg();
  const logDir = input.logDir ?? mkdtempSync(join(tmpdir(), 'nightshift-chaos-'));
  mkdirSync(logDir, { recursive: true });
  const policyText = drillPolicy(options);
  const policyFile = join(logDir, 'policy.yaml');
  writeFileSync(policyFile, policyText);
  const policy = parsePolicy(policyText, policyFile, { registry: actionRegistry, env: {} });
  const jobs = new Map(policy.jobs.map((job) => [job.name, job]));
  const rng = new Prng(options.seed);
  const prefix = `chaos-${options.seed}-${began.toString(36)}`;
  const keys = redisKeys(prefix);
  const observed = new Observed();
  const stage = await openChaosStage(options, { prefix, logDir, policyFile, observed, progress });
  try {
    const { firstByJob, firstTick } = await startProcesses({ options, stage, observed, jobs, progress });
    const chaos = await runChaos({ options, rng, stage, firstTick, progress });
    const quiet = await quietEnd({ options, stage, jobs, firstByJob, keys, firstTick, progress });
    return await chaosReport({
      options,
      began,
      loadStart,
      logDir,
      jobs,
      firstByJob,
      firstTick,
      stage,
      observed,
      chaos,
      quiet,
    });
  } finally {
    await stage.close();
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export { formatReport } from './chaos-drill-format.js';
