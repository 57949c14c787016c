import { z } from 'zod';
import { type Action, sharedOut, workspaceRef } from '../src/engine/index.js';
import { pauseStep, planPause } from './support/owned-steps.js';

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
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, (ws) => planPause(ctx, ws));
  },

  // each target is one independent step: a large run is shared out whole, and the run has nothing to add
  async split(ctx, _params, partSize, resuming) {
    if (!resuming && ctx.workspaces.length <= partSize) return undefined;
    return { targets: sharedOut(ctx.workspaces, ctx.workspaces, resuming), finish: async () => {} };
  },

  async run(ctx) {
    if (!ctx.ownership)
      ctx.log.warn(
        'no REDIS_URL: these pauses are not recorded in the ownership ledger, so a resume with onlyPausedBy (or a window) will not resume them',
      );
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, (ws, step) => pauseStep(ctx, ws, step), {
      pipelined: true,
    });
  },
};
