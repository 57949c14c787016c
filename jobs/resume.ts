import { z } from 'zod';
import type { SelectedWorkspace } from '../src/policy/index.js';
import { DurationSchema } from '../src/policy/index.js';
import { type Action, type ActionContext, type StepContext, workspaceRef } from '../src/runs/index.js';
import { currentStatus, mutateUnlessAlready, STATUS } from './workspace-state.js';

const params = z.strictObject({
  waitReady: z
    .union([DurationSchema, z.literal('none')])
    .optional()
    .meta({
      description: 'How long to wait for each workspace to be Active; none to not wait.',
      default: '15m',
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

/** Waits until the workspace is Active; time to ready counts from `since`, the target's first attempt. */
async function waitUntilActive(ctx: ActionContext, ws: SelectedWorkspace, timeoutMs: number, since: number) {
  await ctx.fleet.waitFor(ws.workgroupId, ws.workspaceId, (w) => w.status === STATUS.active, {
    timeoutMs,
    describe: `${ws.workgroupName}/${ws.workspaceName} not Active within ${Math.round(timeoutMs / 1000)}s`,
  });
  return { timeToReadyMs: Date.now() - since };
}

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
    with: { waitReady: 20m }
`,

  async plan(ctx) {
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws) => {
      const skip = skipReason(ws.status);
      return skip
        ? { outcome: 'skipped', reason: skip }
        : { outcome: 'planned', reason: 'would resume (Stopped)' };
    });
  },

  async run(ctx, { waitReady }: Params) {
    const waitMs = waitReady === 'none' ? undefined : (waitReady ?? DEFAULT_WAIT_MS);
    // When each target's first attempt started: time to ready includes failed attempts and backoff.
    const firstTried = new Map<string, number>();
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws, step: StepContext) => {
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
