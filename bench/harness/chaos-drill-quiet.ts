import type { RunSummary } from '../../src/engine/index.js';
import { nextFiring, type PolicyJob } from '../../src/policy/index.js';
import { scheduledRunId } from '../../src/queue/run-queue.js';
import type { redisKeys } from '../../src/store/keys.js';
import type { ResolvedChaosOptions } from './chaos-drill.js';
import type { ChaosStage } from './chaos-drill-stage.js';
import { eventually } from './eventually.js';

/**
 * The chaos drill's quiet end: the runs of the ticks before the end settle, one last tick runs
 * on its own, the schedulers stop once it is handed over, and the fleet's state after it is what
 * the drill judges. The workers are stopped last.
 */

export interface QuietContext {
  options: ResolvedChaosOptions;
  stage: ChaosStage;
  jobs: Map<string, PolicyJob>;
  /** The first tick each job's schedulers announced (epoch ms). */
  firstByJob: Map<string, number>;
  keys: ReturnType<typeof redisKeys>;
  firstTick: number;
  progress: (line: string) => void;
}

export interface QuietEnd {
  /** Whether the runs of the ticks before the end settled within `settleTimeoutMs`. */
  settledInTime: boolean;
  /** The last tick (epoch ms) and its job's action. */
  lastTickAt: number;
  lastAction: string;
  /** The state the last action leaves a workspace in. */
  desired: string;
  /** Workspaces not in it once the transitions were over, with their status. */
  notInState: string[];
}

/** Ticks of `job` from `from` to `to`, both included. */
export function ticksBetween(job: PolicyJob, from: number, to: number): number[] {
  const out: number[] = [];
  for (let f = nextFiring(job.schedule, new Date(from - 1)); f && f.at.getTime() <= to; ) {
    out.push(f.at.getTime());
    f = nextFiring(job.schedule, f.at);
  }
  return out;
}

export async function quietEnd(context: QuietContext): Promise<QuietEnd> {
  const { options, stage, firstTick, progress } = context;
  const settleDeadline = Date.now() + options.settleTimeoutMs;
  const { quietFrom, settledInTime } = await settlePastTicks(context, settleDeadline);
  const last = firstTickFrom(context.jobs, quietFrom);
  progress(
    `${((quietFrom - firstTick) / 1000).toFixed(1)} s: all past ticks recorded; last tick ${last.job} at ${new Date(last.at).toISOString()}`,
  );
  await handOverLastTick(context, last);
  const { lastAction, desired, notInState } = await awaitLastRun(context, last, settleDeadline);
  await Promise.all(stage.processes.alive('worker').map((p) => stage.processes.stop(p, 'SIGTERM')));
  return { settledInTime, lastTickAt: last.at, lastAction, desired, notInState };
}

/** Waits for every tick so far to settle; answers when it did, or when the wait gave up. */
async function settlePastTicks(
  { stage, jobs, firstByJob, progress }: QuietContext,
  settleDeadline: number,
): Promise<{ quietFrom: number; settledInTime: boolean }> {
  // a tick is settled once its run is recorded, or will never be: BullMQ failed its job (a run
  // stalled too often), or no scheduler enqueued it at all
  const settled = async (job: string, at: number) => {
    const runId = scheduledRunId(job, new Date(at));
    if ((await stage.history.get(runId)) !== undefined) return true;
    const state = await stage.queue.getJobState(runId);
    return state === 'failed' || (state === 'unknown' && Date.now() - at > 10_000);
  };
  let quietFrom = 0;
  let settledInTime = true;
  await eventually(
    'runs of the ticks before the end settled',
    async () => {
      const now = Date.now();
      for (const [name, job] of jobs) {
        for (const at of ticksBetween(job, firstByJob.get(name) as number, now)) {
          if (!(await settled(name, at))) return false;
        }
      }
      quietFrom = now;
      return true;
    },
    Math.max(1_000, settleDeadline - Date.now()),
    250,
  ).catch((error: unknown) => {
    settledInTime = false;
    quietFrom = Date.now();
    progress(`!! ${(error as Error).message}`);
  });
  return { quietFrom, settledInTime };
}

/** The last tick: the first one of any job after `quietFrom`, a little after every earlier run was recorded. */
function firstTickFrom(jobs: Map<string, PolicyJob>, quietFrom: number): { job: string; at: number } {
  let last = { job: '', at: Number.POSITIVE_INFINITY };
  for (const [name, job] of jobs) {
    const next = nextFiring(job.schedule, new Date(quietFrom))?.at.getTime() ?? Number.POSITIVE_INFINITY;
    if (next < last.at) last = { job: name, at: next };
  }
  return last;
}

/** Stops the schedulers once the last tick is handed over, before they hand over the next one. */
async function handOverLastTick(
  { options, stage, keys, progress }: QuietContext,
  last: { job: string; at: number },
): Promise<void> {
  const lead = 2_000;
  await eventually(
    'the last tick handed to the queue',
    async () => Number((await stage.redis.get(keys.lastTick(last.job))) ?? 0) >= last.at,
    Math.max(1_000, last.at - Date.now() + 30_000),
    50,
  );
  await Promise.all(stage.processes.alive('scheduler').map((p) => stage.processes.stop(p, 'SIGTERM')));
  if (Date.now() > last.at + options.tickSeconds * 1000 - lead)
    progress('!! the schedulers stopped late: a tick after the last may have been handed over');
}

/** Waits for the last run's summary and the transitions it started; then reads the fleet's state. */
async function awaitLastRun(
  { options, stage, jobs, progress }: QuietContext,
  last: { job: string; at: number },
  settleDeadline: number,
): Promise<Pick<QuietEnd, 'lastAction' | 'desired' | 'notInState'>> {
  const { sim } = stage;
  const lastSummary: RunSummary | undefined = await eventually(
    `the last run (${last.job} at ${new Date(last.at).toISOString()}) recorded`,
    async () => stage.history.get(scheduledRunId(last.job, new Date(last.at))),
    Math.max(1_000, settleDeadline - Date.now() + 30_000),
    250,
  ).catch(() => undefined);
  const lastAction = jobs.get(last.job)?.action ?? '?';
  const desired = lastAction === 'pause' ? 'Stopped' : 'Active';
  // a pause leaves workspaces Stopping for the transition
  await eventually(
    'transitions over',
    () => sim.state.workspaces.every((ws) => ws.status === desired) || undefined,
    options.transitionMs + 5_000,
    100,
  ).catch(() => undefined);
  const notInState = sim.state.workspaces
    .filter((ws) => ws.status !== desired)
    .map((ws) => `${ws.workgroup_id}/${ws.workspace_id}: ${ws.status}`);
  progress(
    `last run ${lastSummary?.outcome ?? 'not recorded'}; ${stage.total - notInState.length}/${stage.total} workspaces ${desired}`,
  );
  return { lastAction, desired, notInState };
}
