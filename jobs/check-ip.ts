import { z } from 'zod';
import {
  type Action,
  type PlanContext,
  readOnlyVerbs,
  type SelectedWorkgroup,
  type StepResult,
  workgroupRef,
} from '../src/engine/index.js';
import { isEnforced, runnerBlocked } from './support/allow-list.js';

const params = z.strictObject({});

/**
 * Asks each target workgroup whether its allow list admits this runner; a refusal is a finding of
 * the workgroup's step, so a retried attempt never reports it twice.
 */
function checkWorkgroups(ctx: PlanContext, done: (detail: Record<string, unknown>) => StepResult) {
  return ctx.forEachTarget(ctx.workgroups, workgroupRef, async (wg: SelectedWorkgroup, step) => {
    if (!isEnforced(wg.workgroup))
      return { outcome: 'skipped', reason: 'allow list disabled: it blocks nobody' };
    const { result } = await ctx.api.checkCurrentIp(wg.workgroupId, { signal: step.signal });
    const findings = result.isAllowed ? [] : [runnerBlocked(wg.workgroupName, result.currentIp)];
    return { ...done({ currentIp: result.currentIp, allowed: result.isAllowed }), findings };
  });
}

/** Finds the workgroups whose allow list would block the machine nightshift runs on. */
export const checkIp: Action<typeof params> = {
  name: 'check-ip',
  description: "Report the workgroups whose enforced IP allow list does not admit this runner's address.",
  destructive: false,
  scope: 'workgroup',
  params,
  example: `version: 1
jobs:
  runner-reachability:
    description: Warn before the night's jobs if a workgroup's allow list blocks this runner
    schedule: "45 19 * * 1-5"
    timezone: Europe/Berlin
    action: check-ip
    target: { workgroups: ["*"] }
`,

  ...readOnlyVerbs((ctx, _params, done) => checkWorkgroups(ctx, done), 'checked (read-only)'),
};
