import { z } from 'zod';
import {
  type Action,
  DurationSchema,
  describeHold,
  type PlanContext,
  type SelectedWorkspace,
  STATUS,
  type StepContext,
  sharedOut,
  workspaceRef,
} from '../src/engine/index.js';
import { describeOwnership, holdOn, resumeSkipReason, resumeStep } from './support/owned-steps.js';

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
      'Resume only the workspaces this pause job (of the same policy) paused and still owns, over any number of its runs; the other workspaces of the target are skipped. Needs the ownership ledger in Redis.',
  }),
});
type Params = z.output<typeof params>;

const DEFAULT_WAIT_MS = 15 * 60_000;

/**
 * With `onlyPausedBy`, why a workspace is left alone (undefined: the pause job owns its pause),
 * from the ownership ledger read once. Without the ledger (no REDIS_URL) a run throws rather
 * than resume too much, and a plan says for each stopped workspace what it cannot know.
 */
type PausedByFilter = (ws: SelectedWorkspace) => { skip: string } | { unknown: string } | undefined;

async function pausedByFilter(
  ctx: PlanContext,
  job: string | undefined,
  planning: boolean,
): Promise<PausedByFilter> {
  if (job === undefined) return () => undefined;
  if (!ctx.ownership) {
    const why = `who paused it is unknown without Redis (set REDIS_URL: the ownership ledger is there)`;
    if (planning) return () => ({ unknown: `would resume it if ${job} paused it; ${why}` });
    throw new Error(
      `onlyPausedBy needs the ownership ledger in Redis: set REDIS_URL, or run the job through a worker`,
    );
  }
  const records = await ctx.ownership.records();
  const owned = [...records.values()].filter((record) => record.owner === job).length;
  ctx.evidence({ onlyPausedBy: { job, owned } });
  ctx.log.info({ onlyPausedBy: job, owned }, 'resuming what the pause job owns');
  return (ws) => {
    const record = records.get(workspaceRef(ws).key);
    if (record?.owner === job) return undefined;
    return {
      skip: record
        ? `not paused by ${job} (${describeOwnership(record)})`
        : `not paused by ${job} (nightshift does not own its pause)`,
    };
  };
}

/** When a target's first attempt started (epoch ms), kept across attempts and takeovers. */
const FirstTriedSchema = z.object({ firstTriedAt: z.number() });

/**
 * Waits until the workspace is Active; time to ready counts from `since`, the target's first
 * attempt. Called once the resume was answered.
 */
async function waitUntilActive(ctx: PlanContext, ws: SelectedWorkspace, timeoutMs: number, since: number) {
  // Stopping, or Stopped once it was seen on its way up or in a listing asked for after the resume
  // was answered: someone paused it meanwhile. Waiting out waitReady would hold the run (and a
  // queued next run of the job) for nothing, and resuming it again would fight whoever paused it.
  const answered = ctx.fleet.requested;
  let onItsWay = false;
  await ctx.fleet.waitFor(ws.workgroupId, ws.workspaceId, (w) => w.status === STATUS.active, {
    timeoutMs,
    describe: `${ws.workgroupName}/${ws.workspaceName} not Active within ${Math.round(timeoutMs / 1000)}s`,
    hopeless: (w, listing) => {
      // Stopping only comes from a pause; Stopped in a listing asked for before the resume was
      // answered may only predate it
      if (w.status === STATUS.resuming) onItsWay = true;
      const stoppedAgain = w.status === STATUS.stopped && (onItsWay || listing.generation > answered);
      if (w.status === STATUS.stopping || stoppedAgain)
        return `${ws.workgroupName}/${ws.workspaceName} ${PAUSED_AGAIN} (now ${w.status}); not resumed a second time`;
      return undefined;
    },
  });
  return { timeToReadyMs: ctx.now().getTime() - since };
}

/**
 * The workspace as the resume should act on it. One the run's listing shows Stopping was paused
 * before this run listed the fleet (a pause run that ran late into this tick, say): the API
 * resumes it only once Stopped, and skipping it would leave it paused until the next run, for a
 * few seconds of transition. It is waited for (within `waitReady`; none: not waited for) and
 * resumed as any Stopped workspace would be; only the first try waits, a retry looks afresh.
 */
async function stoppedOnceStopping(
  ctx: PlanContext,
  ws: SelectedWorkspace,
  step: StepContext,
  waitMs: number | undefined,
): Promise<SelectedWorkspace> {
  if (ws.status !== STATUS.stopping || step.attempt > 1 || waitMs === undefined) return ws;
  const now = await ctx.fleet.waitFor(ws.workgroupId, ws.workspaceId, (w) => w.status !== STATUS.stopping, {
    timeoutMs: waitMs,
    describe: `${ws.workgroupName}/${ws.workspaceName} not Stopped within ${Math.round(waitMs / 1000)}s, so not resumed`,
  });
  return { ...ws, status: now.status ?? undefined };
}

/** Why a resume's wait ended early: the workspace was paused again while it came up. */
export const PAUSED_AGAIN = 'paused again while the resume waited for it, by another run or by hand';

/** Resumes paused workspaces, typically before office hours after a nightly `pause`. */
export const resume: Action<typeof params> = {
  name: 'resume',
  description: 'Resume the selected workspaces and wait until each is Active (reports time to ready).',
  destructive: false,
  scope: 'workspace',
  params,
  longestWait: (p) =>
    p.waitReady === 'none'
      ? undefined
      : {
          ms: p.waitReady ?? DEFAULT_WAIT_MS,
          why: p.waitReady === undefined ? 'waitReady, 15m by default' : 'waitReady',
        },
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

  async plan(ctx, { waitReady, onlyPausedBy }: Params) {
    const pausedBy = await pausedByFilter(ctx, onlyPausedBy, true);
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws) => {
      const hold = holdOn(ctx, ws);
      if (hold?.state === 'stopped') return { outcome: 'skipped', reason: describeHold(hold) };
      const filter = pausedBy(ws);
      if (filter && 'skip' in filter) return { outcome: 'skipped', reason: filter.skip };
      if (ws.status === STATUS.stopping && waitReady !== 'none')
        return {
          outcome: 'planned',
          reason: filter?.unknown ?? 'would resume it once Stopped (Stopping now)',
        };
      const skip = resumeSkipReason(ws.status);
      if (skip) return { outcome: 'skipped', reason: skip };
      return { outcome: 'planned', reason: filter?.unknown ?? 'would resume (Stopped)' };
    });
  },

  // one resume per workspace, each independent: a large run is shared out; the run itself says
  // what the pause job still owns once every part has ended
  async split(ctx, { onlyPausedBy }: Params, partSize, resuming) {
    if (!resuming && ctx.workspaces.length <= partSize) return undefined;
    await pausedByFilter(ctx, onlyPausedBy, false);
    return {
      targets: sharedOut(ctx.workspaces, ctx.workspaces, resuming),
      finish: async () => {
        if (onlyPausedBy && ctx.ownership) {
          ctx.ownership.refresh();
          await markStillOwned(ctx, onlyPausedBy);
        }
      },
    };
  },

  async run(ctx, { waitReady, onlyPausedBy }: Params) {
    const waitMs = waitReady === 'none' ? undefined : (waitReady ?? DEFAULT_WAIT_MS);
    const pausedBy = await pausedByFilter(ctx, onlyPausedBy, false);
    await ctx.forEachTarget(
      ctx.workspaces,
      workspaceRef,
      async (ws, step: StepContext) => {
        const hold = holdOn(ctx, ws);
        if (hold?.state === 'stopped') return { outcome: 'skipped', reason: describeHold(hold) };
        const filter = pausedBy(ws);
        if (filter && 'skip' in filter) return { outcome: 'skipped', reason: filter.skip };
        // time to ready counts from the target's first attempt: failed attempts and backoff included
        let since = (await step.progressRecord.read(FirstTriedSchema))?.firstTriedAt;
        if (since === undefined) {
          since = ctx.now().getTime();
          await step.progressRecord.write({ firstTriedAt: since });
        }
        const { result, coming } = await resumeStep(
          ctx,
          await stoppedOnceStopping(ctx, ws, step, waitMs),
          step,
        );
        if (!coming || waitMs === undefined) return result;
        return { ...result, detail: await waitUntilActive(ctx, ws, waitMs, since) };
      },
      // without waits, a resume is a call with Redis writes around it
      { pipelined: waitMs === undefined },
    );
    // a part leaves the verdict to its run, which sees every part's resumes
    if (onlyPausedBy && ctx.ownership && !ctx.part) await markStillOwned(ctx, onlyPausedBy);
  },
};

/**
 * A resume that leaves stopped what its pause job still owns did not finish its work, whether it
 * failed or found those workspaces not yet resumable (still Stopping): the run is partial, and
 * the ownership kept makes the next run try again.
 */
async function markStillOwned(ctx: PlanContext, job: string): Promise<void> {
  const records = (await ctx.ownership?.records()) ?? new Map();
  const left = ctx.workspaces.filter((ws) => records.get(workspaceRef(ws).key)?.owner === job);
  if (left.length === 0) return;
  const names = left.slice(0, 5).map((ws) => `${ws.workgroupName}/${ws.workspaceName}`);
  const more = left.length > names.length ? ` and ${left.length - names.length} more` : '';
  ctx.markRun(
    'partial',
    `${left.length} workspace(s) ${job} paused are still not resumed (${names.join(', ')}${more}); the next run tries again`,
  );
}
