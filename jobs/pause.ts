import { z } from 'zod';
import { type Action, workspaceRef } from '../src/runs/index.js';
import { currentStatus, mutateUnlessAlready, STATUS } from './workspace-state.js';

const PAUSED: readonly string[] = [STATUS.stopping, STATUS.stopped];
const params = z.strictObject({});

/** Why a workspace in `status` is left alone, in the same words for the plan and the run; none when Active. */
function skipReason(status: string | undefined): string | undefined {
  if (status === STATUS.active) return undefined;
  return status && PAUSED.includes(status) ? `already ${status}` : `not Active: ${status ?? 'unknown'}`;
}

/** Pauses running workspaces so they stop costing compute; `resume` brings them back. */
export const pause: Action<typeof params> = {
  name: 'pause',
  description: 'Pause the selected workspaces (stops compute; data and settings stay).',
  destructive: false,
  scope: 'workspace',
  params,
  example: `version: 1
targets:
  dev:
    workgroups: ["dev-*"]
    exclude: ["dev-core/*"]
jobs:
  nightly-pause:
    description: Pause dev workspaces after office hours
    schedule: "0 20 * * 1-5"
    timezone: Europe/Berlin
    action: pause
    target: dev
`,

  async plan(ctx) {
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws) => {
      const skip = skipReason(ws.status);
      return skip
        ? { outcome: 'skipped', reason: skip }
        : { outcome: 'planned', reason: 'would pause (Active)' };
    });
  },

  async run(ctx) {
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws, step) => {
      const status = await currentStatus(ctx, step, ws.workgroupId, ws.workspaceId, ws.status);
      const skip = skipReason(status);
      if (skip) return { outcome: 'skipped', reason: skip };
      const already = await mutateUnlessAlready(ctx, ws.workgroupId, ws.workspaceId, PAUSED, () =>
        ctx.api.pauseWorkspace(ws.workgroupId, ws.workspaceId, { signal: step.signal }),
      );
      return already ? { outcome: 'skipped', reason: `already ${already}` } : { outcome: 'succeeded' };
    });
  },
};
