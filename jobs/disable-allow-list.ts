import { z } from 'zod';
import type { Workgroup } from '../src/api/index.js';
import {
  type Action,
  idempotentStep,
  type PlanContext,
  type SelectedWorkgroup,
  type StepContext,
  workgroupRef,
} from '../src/engine/index.js';
import { isEnforced } from './support/allow-list.js';

const params = z.strictObject({});

const ALREADY = 'already disabled';

function listed(ctx: PlanContext, workgroupId: string): Workgroup | undefined {
  return ctx.fleet.workgroups.find((workgroup) => workgroup.workgroup_id === workgroupId);
}

/**
 * The workgroup as a step should act on it: the run's listing on the first attempt, a fresh
 * listing on a retry (the failed attempt may have disabled it after all).
 */
async function currentWorkgroup(
  ctx: PlanContext,
  step: StepContext,
  wg: SelectedWorkgroup,
): Promise<Workgroup> {
  if (step.attempt === 1) return wg.workgroup;
  await ctx.fleet.refresh();
  const workgroup = listed(ctx, wg.workgroupId);
  if (!workgroup) throw new Error(`workgroup ${wg.workgroupName} (${wg.workgroupId}) is no longer listed`);
  return workgroup;
}

/** Turns off IP allow-list enforcement; the entries stay, so enforcement can be turned back on as it was. */
export const disableAllowList: Action<typeof params> = {
  name: 'disable-allow-list',
  description:
    'Disable IP allow-list enforcement of the selected workgroups (every address may then connect).',
  destructive: true,
  scope: 'workgroup',
  params,
  example: `version: 1
jobs:
  open-sandboxes:
    description: Break glass. Open the sandbox workgroups to every address; run by hand
    schedule: "0 0 1 1 *"
    suspend: true
    action: disable-allow-list
    target: { workgroups: ["sandbox-*"] }
    maxTargets: 5
    confirm: true
`,

  async plan(ctx) {
    await ctx.forEachTarget(ctx.workgroups, workgroupRef, async (wg) =>
      isEnforced(wg.workgroup)
        ? { outcome: 'planned', reason: 'would disable allow-list enforcement' }
        : { outcome: 'skipped', reason: ALREADY },
    );
  },

  async run(ctx) {
    await ctx.forEachTarget(ctx.workgroups, workgroupRef, async (wg, step) => {
      if (!isEnforced(await currentWorkgroup(ctx, step, wg))) return { outcome: 'skipped', reason: ALREADY };
      // a refusal of a change someone else already made is not a failure
      const outcome = await idempotentStep({
        attempt: () => ctx.api.disableAllowList(wg.workgroupId, { signal: step.signal }),
        isDone: async () => {
          await ctx.fleet.refresh();
          const after = listed(ctx, wg.workgroupId);
          return after !== undefined && !isEnforced(after);
        },
      });
      return outcome.already ? { outcome: 'skipped', reason: ALREADY } : { outcome: 'succeeded' };
    });
  },
};
