import { loadavg } from 'node:os';
import { join } from 'node:path';
import { PAUSED_AGAIN } from '../../jobs/resume.js';
import type { RunSummary } from '../../src/engine/index.js';
import type { PolicyJob } from '../../src/policy/index.js';
import { scheduledRunId } from '../../src/queue/run-queue.js';
import type { RequestLogEntry } from '../../src/sim/index.js';
import type { ChaosDrillReport, Goal, ResolvedChaosOptions } from './chaos-drill.js';
import type { ChaosRecords } from './chaos-drill-faults.js';
import type { Call, Observed } from './chaos-drill-observed.js';
import { type QuietEnd, ticksBetween } from './chaos-drill-quiet.js';
import type { ChaosStage } from './chaos-drill-stage.js';

/**
 * The chaos drill's figures and goals, from the run history, the run queue, the processes' logs
 * (Observed) and the simulator's request log; the definitions are in bench/harness/chaos-drill.ts.
 */

/** Everything the drill did and saw, for the report. */
export interface DrillRecord {
  options: ResolvedChaosOptions;
  began: number;
  loadStart: number[];
  logDir: string;
  jobs: Map<string, PolicyJob>;
  firstByJob: Map<string, number>;
  firstTick: number;
  stage: ChaosStage;
  observed: Observed;
  chaos: ChaosRecords;
  quiet: QuietEnd;
}

interface Tick {
  job: string;
  at: number;
}

type Targets = ChaosDrillReport['targets'];

export async function chaosReport(record: DrillRecord): Promise<ChaosDrillReport> {
  const { options, firstTick, stage, observed, quiet } = record;
  const { kills, restarts } = record.chaos;
  const { summaries, failedJobs, bullFailed } = await readRuns(stage, record.jobs);
  const expected = expectedTicks(record.jobs, record.firstByJob, quiet.lastTickAt);
  const { executed, lost, duplicated, unexpected } = tickFigures(expected, summaries, failedJobs);
  duplicated.push(...concurrentExecutions(observed.calls));
  const api = apiFigures(stage.sim.requests());
  if (api.doubleMutations > 0)
    duplicated.push(
      `${api.doubleMutations} accepted pause or resume calls repeated the workspace's previous accepted call`,
    );
  const { atOnce, outOfTickOrder } = queueOverlaps(record.jobs, expected, observed);
  const { outcomes, catchUps, targets, retries } = runFigures(summaries, {
    overlappingRuns: overlappingRuns(summaries),
    outOfTickOrder,
  });
  measureRecoveries(record.chaos, observed, firstTick);
  const unexpectedExits = stage.processes.all
    .filter((p) => p.exitedAt !== undefined && !p.stopping)
    .map((p) => `${p.instance} (log: ${join(record.logDir, `${p.instance.replace('#', '.')}.log`)})`);
  const { total } = stage;
  const { notInState, desired, lastAction } = quiet;
  const percent = total === 0 ? 100 : Math.round(((total - notInState.length) / total) * 10_000) / 100;
  const goals = drillGoals(options, {
    expected: expected.length,
    executed,
    lost,
    duplicated,
    unexpected,
    desiredState: `${percent} % (${total - notInState.length} / ${total} ${desired} after the last ${lastAction})`,
    notInState: notInState.length,
    targets,
    settledInTime: quiet.settledInTime,
    atOnce,
    unexpectedExits,
    kills,
  });

  return {
    options: { ...options, fleet: `${options.workgroups}x${options.workspacesPerWorkgroup}` },
    startedAt: new Date(record.began).toISOString(),
    durationMs: Date.now() - record.began,
    loadAverage: { start: record.loadStart, end: loadavg() },
    logDir: record.logDir,
    ticks: {
      expected: expected.length,
      executed,
      lost,
      duplicated,
      unexpected,
      outcomes,
      catchUps,
      firstTick: new Date(firstTick).toISOString(),
      lastTick: new Date(quiet.lastTickAt).toISOString(),
      lastAction,
    },
    targets,
    desiredState: { expected: desired, total, inState: total - notInState.length, percent, notInState },
    retries,
    api,
    kills,
    restarts,
    unexpectedExits,
    errorLines: Object.fromEntries(observed.errors),
    bullFailed,
    goals,
    ok: goals.every((g) => g.ok),
  };
}

/** Every summary of the drill's jobs, and the runs BullMQ holds as failed. */
async function readRuns(stage: ChaosStage, jobs: Map<string, PolicyJob>) {
  const summaries: RunSummary[] = [];
  for (const name of jobs.keys()) summaries.push(...(await stage.history.list({ job: name, limit: 10_000 })));
  const failedJobs = new Map(
    (await stage.queue.getJobs(['failed'], 0, 1000)).map((job) => [job.id as string, job.failedReason]),
  );
  const bullFailed = [...failedJobs].map(([id, reason]) => `${id}: ${reason}`);
  return { summaries, failedJobs, bullFailed };
}

/** Every tick of every job from the first one its schedulers announced to the last tick. */
function expectedTicks(
  jobs: Map<string, PolicyJob>,
  firstByJob: Map<string, number>,
  lastTickAt: number,
): Tick[] {
  const expected: Tick[] = [];
  for (const [name, job] of jobs) {
    for (const at of ticksBetween(job, firstByJob.get(name) as number, lastTickAt))
      expected.push({ job: name, at });
  }
  return expected;
}

/** Which expected ticks ran, which were lost, which have more than one summary, and summaries of no expected tick. */
function tickFigures(
  expected: readonly Tick[],
  summaries: readonly RunSummary[],
  failedJobs: Map<string, string>,
) {
  const tickKey = (job: string, at: number) => `${job}@${new Date(at).toISOString()}`;
  const byTick = new Map<string, RunSummary[]>();
  for (const summary of summaries) {
    if (!summary.scheduledAt) continue;
    const key = tickKey(summary.job, Date.parse(summary.scheduledAt));
    byTick.set(key, [...(byTick.get(key) ?? []), summary]);
  }
  const expectedKeys = new Set(expected.map((t) => tickKey(t.job, t.at)));
  const ran = (s: RunSummary) =>
    s.outcome === 'succeeded' || s.outcome === 'partial' || s.outcome === 'failed';
  const lost: string[] = [];
  const duplicated: string[] = [];
  let executed = 0;
  for (const key of expectedKeys) {
    const found = byTick.get(key) ?? [];
    const tick = expected.find((t) => tickKey(t.job, t.at) === key) as Tick;
    const failedReason = failedJobs.get(scheduledRunId(tick.job, new Date(tick.at)));
    if (found.some(ran)) executed++;
    else
      lost.push(
        found.length
          ? `${key} (${found.map((s) => `${s.outcome}: ${s.reason ?? ''}`).join('; ')})`
          : failedReason
            ? `${key} (failed in BullMQ, no summary: ${failedReason})`
            : key,
      );
    if (found.length > 1)
      duplicated.push(`${key}: ${found.length} summaries (${found.map((s) => s.runId).join(', ')})`);
  }
  const unexpected = [...byTick.keys()].filter((key) => !expectedKeys.has(key));
  return { executed, lost, duplicated, unexpected };
}

/**
 * A run (or part) executed twice at once: two of its executions had API calls in flight at the
 * same time. An execution whose lease ran out and the one resuming it are both alive a moment
 * (the first unwinds, logs, lets go), and a redelivery of a finished part finds it all
 * checkpointed: only calls are evidence of acting.
 */
function concurrentExecutions(calls: readonly Call[]): string[] {
  const duplicated: string[] = [];
  for (const [unit, unitCalls] of groupBy(calls, (call) => call.unit)) {
    const spans = [...groupBy(unitCalls, (call) => call.execution)].map(([execution, own]) => ({
      execution,
      ...callSpan(own),
    }));
    for (const [index, first] of spans.entries())
      for (const second of spans.slice(index + 1))
        if (first.from < second.to && second.from < first.to)
          duplicated.push(
            `${unit}: executions ${first.execution} and ${second.execution} made API calls at once`,
          );
  }
  return duplicated;
}

/**
 * overlap: queue: never two runs of a job acting at once, a run cut by a kill counting as acting
 * from its first API call to its last answer, its parts' included. (The order among queued runs
 * is not promised: each waits for the lock, and the first to find it free goes; those starts are
 * only counted.)
 */
function queueOverlaps(jobs: Map<string, PolicyJob>, expected: readonly Tick[], observed: Observed) {
  const atOnce: string[] = [];
  let outOfTickOrder = 0;
  for (const name of jobs.keys()) {
    const spans = expected
      .filter((tick) => tick.job === name)
      .sort((a, b) => a.at - b.at)
      .flatMap((tick) => {
        const runId = scheduledRunId(name, new Date(tick.at));
        const executions = observed.starts.get(runId) ?? [];
        const calls = observed.calls.filter((call) => call.runId === runId);
        if (executions.length === 0) return [];
        return [
          {
            runId,
            startedAt: Math.min(...executions.map((e) => e.startedAt)),
            ...(calls.length ? callSpan(calls) : { from: 0, to: 0 }),
          },
        ];
      });
    for (const [index, span] of spans.entries()) {
      for (const later of spans.slice(index + 1)) {
        if (later.startedAt < span.startedAt) outOfTickOrder++;
        if (later.from < span.to && span.from < later.to)
          atOnce.push(
            `${span.runId} and ${later.runId} made API calls at once for ${Math.round(Math.min(span.to, later.to) - Math.max(span.from, later.from))} ms`,
          );
      }
    }
  }
  return { atOnce, outOfTickOrder };
}

/** The runs' outcomes and their targets' figures and retries. */
function runFigures(
  summaries: readonly RunSummary[],
  orders: Pick<Targets, 'overlappingRuns' | 'outOfTickOrder'>,
): {
  outcomes: Record<string, number>;
  catchUps: number;
  targets: Targets;
  retries: ChaosDrillReport['retries'];
} {
  const outcomes: Record<string, number> = {};
  let catchUps = 0;
  const targets: Targets = {
    records: 0,
    succeeded: 0,
    skipped: 0,
    failed: 0,
    reversed: 0,
    skipReasons: {},
    overlappingRuns: orders.overlappingRuns,
    outOfTickOrder: orders.outOfTickOrder,
  };
  const retries = { targetRetries: 0, redeliveries: 0, runsRedelivered: 0 };
  for (const summary of summaries) {
    outcomes[summary.outcome] = (outcomes[summary.outcome] ?? 0) + 1;
    if (summary.trigger === 'catch-up') catchUps++;
    const deliveries = summary.deliveries ?? 1;
    retries.redeliveries += Math.max(0, deliveries - 1);
    if (deliveries > 1) retries.runsRedelivered++;
    for (const target of summary.targets) {
      targets.records++;
      if (target.outcome === 'succeeded') targets.succeeded++;
      else if (target.outcome === 'skipped') {
        targets.skipped++;
        // counted by kind: the time in `paused by job … since <time>` differs for every workspace
        const reason = (target.reason ?? '(none)').replace(/ since \d{4}-\d\d-\d\dT[\d:.]+Z/, '');
        targets.skipReasons[reason] = (targets.skipReasons[reason] ?? 0) + 1;
      } else if (target.outcome === 'failed') {
        targets.failed++;
        if (target.error?.message.includes(PAUSED_AGAIN)) targets.reversed++;
      }
      retries.targetRetries += Math.max(0, target.attempts - 1);
    }
  }
  return { outcomes, catchUps, targets, retries };
}

/** Pairs of runs of different jobs that were executing at the same time. */
function overlappingRuns(summaries: readonly RunSummary[]): number {
  let count = 0;
  const spans = summaries.flatMap((summary) =>
    summary.startedAt && summary.finishedAt
      ? [{ job: summary.job, from: Date.parse(summary.startedAt), to: Date.parse(summary.finishedAt) }]
      : [],
  );
  for (const [index, a] of spans.entries()) {
    for (const b of spans.slice(index + 1)) if (a.job !== b.job && a.from < b.to && b.from < a.to) count++;
  }
  return count;
}

/** Fills in each kill's recovery and each Redis restart's reconnection. */
function measureRecoveries({ kills, restarts }: ChaosRecords, observed: Observed, firstTick: number): void {
  for (const kill of kills) {
    const killedAt = firstTick + kill.atMs;
    let worst = 0;
    for (const runId of kill.runs) {
      const resumed = (observed.starts.get(runId) ?? []).find(
        (e) => e.instance !== kill.instance && e.startedAt >= killedAt,
      );
      if (resumed) worst = Math.max(worst, resumed.startedAt - killedAt);
      else kill.unrecovered.push(runId);
    }
    kill.recoveryMs = kill.runs.length > 0 && kill.unrecovered.length < kill.runs.length ? worst : undefined;
  }
  for (const restart of restarts) {
    if (restart.what !== 'redis') continue;
    const at = firstTick + restart.atMs;
    const after = observed.restored.filter((r) => r.at >= at && r.at <= at + 60_000);
    if (after.length > 0) restart.reconnectedMs = Math.max(...after.map((r) => r.at)) - at;
  }
}

/** The figures the goals judge. */
interface GoalFigures {
  expected: number;
  executed: number;
  lost: readonly string[];
  duplicated: readonly string[];
  unexpected: readonly string[];
  /** `<percent> % (<in state> / <total> <state> after the last <action>)`. */
  desiredState: string;
  notInState: number;
  targets: Targets;
  settledInTime: boolean;
  atOnce: readonly string[];
  unexpectedExits: readonly string[];
  kills: ChaosRecords['kills'];
}

function drillGoals(options: ResolvedChaosOptions, figures: GoalFigures): Goal[] {
  const { lost, duplicated, unexpected, targets, settledInTime, atOnce, unexpectedExits, kills } = figures;
  return [
    {
      name: 'runs executed = runs expected',
      ok: figures.executed === figures.expected && lost.length === 0,
      detail: `${figures.executed} / ${figures.expected}`,
    },
    { name: 'no run lost', ok: lost.length === 0, detail: lost.length ? lost.slice(0, 5).join('; ') : '0' },
    {
      name: 'no run duplicated',
      ok: duplicated.length === 0,
      detail: duplicated.length ? duplicated.slice(0, 5).join('; ') : '0',
    },
    {
      name: 'no summary for a tick outside the drill',
      ok: unexpected.length === 0,
      detail: unexpected.join('; ') || '0',
    },
    {
      name: 'targets in their desired state at the end',
      ok: figures.notInState === 0,
      detail: figures.desiredState,
    },
    {
      name: 'no target failed (but those the other job reversed meanwhile)',
      ok: targets.failed === targets.reversed,
      detail: `${targets.failed - targets.reversed} (${targets.reversed} reversed)`,
    },
    {
      name: 'past ticks settled after the chaos',
      ok: settledInTime,
      detail: settledInTime ? 'yes' : `not within ${options.settleTimeoutMs / 1000} s`,
    },
    ...(options.overlap === 'queue'
      ? [
          {
            name: 'never two runs of a job at once (overlap: queue), kills included',
            ok: atOnce.length === 0,
            detail: atOnce.slice(0, 5).join('; ') || '0',
          },
        ]
      : []),
    {
      name: 'no process exited unless stopped',
      ok: unexpectedExits.length === 0,
      detail: unexpectedExits.join('; ') || '0',
    },
    {
      name: 'every killed run recovered',
      ok: kills.every((k) => k.unrecovered.length === 0),
      detail: kills.flatMap((k) => k.unrecovered).join('; ') || '0',
    },
  ];
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

/** From the first call's sending to the last call's answer. */
function callSpan(calls: readonly Call[]): { from: number; to: number } {
  return {
    from: Math.min(...calls.map((call) => call.sentAt)),
    to: Math.max(...calls.map((call) => call.answeredAt)),
  };
}

function apiFigures(requests: readonly RequestLogEntry[]): ChaosDrillReport['api'] {
  const injected = { error: 0, hang: 0, throttle: 0, drop: 0 };
  let pauses = 0;
  let resumes = 0;
  let refusedAsAlreadyDone = 0;
  let doubleMutations = 0;
  const lastMutation = new Map<string, string>();
  for (const entry of requests) {
    if (entry.fault && entry.fault !== 'latency') injected[entry.fault]++;
    if (entry.operation !== 'pauseWorkspace' && entry.operation !== 'resumeWorkspace') continue;
    if (entry.status === 400) refusedAsAlreadyDone++;
    if (entry.status !== 200) continue;
    if (entry.operation === 'pauseWorkspace') pauses++;
    else resumes++;
    const workspace = entry.path.split('/').at(-2) as string;
    if (lastMutation.get(workspace) === entry.operation) doubleMutations++;
    lastMutation.set(workspace, entry.operation);
  }
  return { calls: requests.length, injected, pauses, resumes, refusedAsAlreadyDone, doubleMutations };
}
