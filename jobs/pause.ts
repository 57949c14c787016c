import { z } from 'zod';
import { type Action, workspaceRef } from '../src/runs/index.js';
import { currentStatus, mutateUnlessAlready, STATUS } from './workspace-state.js';

const PAUSED = [STATUS.stopping, STATUS.stopped];
const params = z.strictObject({});

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
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws) =>
      ws.status === STATUS.active
        ? { outcome: 'planned', reason: 'would pause (Active)' }
        : { outcome: 'skipped', reason: `not Active: ${ws.status ?? 'unknown'}` },
    );
  },

  async run(ctx) {
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws, step) => {
      const status = await currentStatus(ctx, step, ws.workgroupId, ws.workspaceId, ws.status);
      if (status !== STATUS.active) {
        return {
          outcome: 'skipped',
          reason: PAUSED.includes(status as never)
            ? `already ${status}`
            : `not Active: ${status ?? 'unknown'}`,
        };
      }
      const already = await mutateUnlessAlready(ctx, ws.workgroupId, ws.workspaceId, PAUSED, () =>
        ctx.api.pauseWorkspace(ws.workgroupId, ws.workspaceId, { signal: step.signal }),
      );
      return already ? { outcome: 'skipped', reason: `already ${already}` } : { outcome: 'succeeded' };
    });
  },
};
