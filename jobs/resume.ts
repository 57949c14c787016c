import { z } from 'zod';
import type { SelectedWorkspace } from '../src/policy/index.js';
import { DurationSchema } from '../src/policy/index.js';
import {
  type Action,
  type ActionContext,
  type RunSummary,
  type StepContext,
  workspaceRef,
} from '../src/runs/index.js';
import { currentStatus, mutateUnlessAlready, STATUS } from './workspace-state.js';

const params = z.strictObject({
  waitReady: z
    .union([DurationSchema, z.literal('none')])
    .optional()
    .meta({
      description: 'How long to wait for each workspace to be Active; none to not wait.',
      default: '15m',
    }),
  onlyPausedBy: z.string().min(1).optional().meta({
    description:
      'Resume only the workspaces that the last run of this pause job (of the same policy) paused; the other workspaces of the target are skipped. Needs the run history in Redis.',
  }),
});
type Params = z.output<typeof params>;

const DEFAULT_WAIT_MS = 15 * 60_000;

/**
 * Why a workspace in `status` is not resumed, in the same words for the plan and the run; none
 * when it is Stopped. A Resuming one is skipped too, but the run still waits for it.
 */
function skipReason(status: string | undefined): string | undefined {
  if (status === STATUS.stopped) return undefined;
  return status === STATUS.active || status === STATUS.resuming
    ? `already ${status}`
    : `not Stopped: ${status ?? 'unknown'}`;
}

/** Why a workspace is left alone by `onlyPausedBy`; none when the pause job's run paused it. */
type PausedByFilter = (ws: SelectedWorkspace) => string | undefined;

/**
 * With `onlyPausedBy`, which workspaces the named pause job's last run paused (its targets that
 * succeeded), read from the run history once, before any target is touched. Without the history
 * (a run in a process without REDIS_URL) it throws: the run fails rather than resume too much.
 */
async function pausedByFilter(ctx: ActionContext, job: string | undefined): Promise<PausedByFilter> {
  if (job === undefined) return () => undefined;
  if (!ctx.history)
    throw new Error('onlyPausedBy needs the run history in Redis: set REDIS_URL, or run it through a worker');
  let last: RunSummary | undefined;
  try {
    last = await ctx.history.lastActingRun(job);
  } catch (error) {
    throw new Error(`onlyPausedBy could not read the run history: ${(error as Error).message}`);
  }
  if (!last) {
    ctx.log.info({ onlyPausedBy: job }, 'no run of the pause job to go by: every target skipped');
    const reason = `not paused by ${job} (the run history has no succeeded or partial run of it)`;
    return () => reason;
  }
  const { runId, finishedAt } = last;
  const paused = new Set(last.targets.filter((t) => t.outcome === 'succeeded').map((t) => t.key));
  ctx.evidence({ onlyPausedBy: { job, runId, finishedAt, paused: paused.size } });
  ctx.log.info(
    { onlyPausedBy: job, pauseRunId: runId, paused: paused.size },
    'resuming what the pause paused',
  );
  const reason = `not paused by ${job} (its last run, ${runId}, did not pause it)`;
  return (ws) => (paused.has(workspaceRef(ws).key) ? undefined : reason);
}

/** Waits until the workspace is Active; time to ready counts from `since`, the target's first attempt. */
async function waitUntilActive(ctx: ActionContext, ws: SelectedWorkspace, timeoutMs: number, since: number) {
  // Stopping, or Stopped once it was seen on its way up or well after the resume: someone paused
  // it meanwhile. Waiting out waitReady would hold the run (and a queued next run of the job) for
  // nothing, and resuming it again would fight whoever paused it.
  const waitFrom = Date.now();
  let onItsWay = false;
  await ctx.fleet.waitFor(ws.workgroupId, ws.workspaceId, (w) => w.status === STATUS.active, {
    timeoutMs,
    describe: `${ws.workgroupName}/${ws.workspaceName} not Active within ${Math.round(timeoutMs / 1000)}s`,
    hopeless: (w) => {
      // Stopping only comes from a pause. Stopped may be a listing older than the resume, but not
      // once the workspace was seen coming up, nor STALE_LISTING_MS after the resume (its polls
      // may all have failed while it came up and went down again).
      if (w.status === STATUS.resuming) onItsWay = true;
      const stoppedAgain =
        w.status === STATUS.stopped && (onItsWay || Date.now() - waitFrom >= STALE_LISTING_MS);
      if (w.status === STATUS.stopping || stoppedAgain)
        return `${ws.workgroupName}/${ws.workspaceName} ${PAUSED_AGAIN} (now ${w.status}); not resumed a second time`;
      return undefined;
    },
  });
  return { timeToReadyMs: Date.now() - since };
}

/** How long a listing may still show a workspace Stopped after its resume was accepted. */
const STALE_LISTING_MS = 10_000;

/** Why a resume's wait ended early: the workspace was paused again while it came up. */
export const PAUSED_AGAIN = 'paused again while the resume waited for it, by another run or by hand';

/** Resumes paused workspaces, typically before office hours after a nightly `pause`. */
export const resume: Action<typeof params> = {
  name: 'resume',
  description: 'Resume the selected workspaces and wait until each is Active (reports time to ready).',
  destructive: false,
  scope: 'workspace',
  params,
  example: `version: 1
targets:
  dev:
    workgroups: ["dev-*"]
    exclude: ["dev-core/*"]
jobs:
  morning-resume:
    description: Resume dev workspaces before office hours
    schedule: "30 7 * * 1-5"
    timezone: Europe/Berlin
    action: resume
    target: dev
    with: { waitReady: 20m, onlyPausedBy: nightly-pause }
  nightly-pause:
    schedule: "0 20 * * 1-5"
    timezone: Europe/Berlin
    action: pause
    target: dev
`,
  jobReferences: { onlyPausedBy: { action: 'pause' } },

  async plan(ctx, { onlyPausedBy }: Params) {
    const notPaused = await pausedByFilter(ctx, onlyPausedBy);
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws) => {
      const skip = notPaused(ws) ?? skipReason(ws.status);
      return skip
        ? { outcome: 'skipped', reason: skip }
        : { outcome: 'planned', reason: 'would resume (Stopped)' };
    });
  },

  async run(ctx, { waitReady, onlyPausedBy }: Params) {
    const waitMs = waitReady === 'none' ? undefined : (waitReady ?? DEFAULT_WAIT_MS);
    const notPaused = await pausedByFilter(ctx, onlyPausedBy);
    // When each target's first attempt started: time to ready includes failed attempts and backoff.
    const firstTried = new Map<string, number>();
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws, step: StepContext) => {
      const notOurs = notPaused(ws);
      if (notOurs) return { outcome: 'skipped', reason: notOurs };
      const key = workspaceRef(ws).key;
      const since = firstTried.get(key) ?? Date.now();
      firstTried.set(key, since);
      const status = await currentStatus(ctx, step, ws.workgroupId, ws.workspaceId, ws.status);
      if (status === STATUS.resuming) {
        // on its way already (someone else's resume, or ours whose answer was lost): waited for all the same
        const detail = waitMs === undefined ? undefined : await waitUntilActive(ctx, ws, waitMs, since);
        return { outcome: 'skipped', reason: 'already Resuming', detail };
      }
      const skip = skipReason(status);
      if (skip) return { outcome: 'skipped', reason: skip };
      const already = await mutateUnlessAlready(
        ctx,
        ws.workgroupId,
        ws.workspaceId,
        [STATUS.resuming, STATUS.active],
        () => ctx.api.resumeWorkspace(ws.workgroupId, ws.workspaceId, { signal: step.signal }),
      );
      const detail = waitMs === undefined ? undefined : await waitUntilActive(ctx, ws, waitMs, since);
      return already
        ? { outcome: 'skipped', reason: `already ${already}`, detail }
        : { outcome: 'succeeded', detail };
    });
  },
};
