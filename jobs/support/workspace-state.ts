import { ApiError } from '../../src/api/index.js';
import type { PlanContext, StepContext } from '../../src/engine/index.js';

/**
 * The workspace statuses the actions reason about. The spec leaves status values open; these
 * are the ones the platform reports (and the simulator implements, see docs/simulator.md).
 */
export const STATUS = {
  active: 'Active',
  stopping: 'Stopping',
  stopped: 'Stopped',
  resuming: 'Resuming',
  restoring: 'Restoring',
} as const;

/**
 * A workspace's status as a step should act on it: the run's listing on the first try, a fresh
 * listing on any later one (the failed try may have changed it). A throttled re-read throws its
 * throttle, which the engine waits out without counting an attempt, as for the step's own calls.
 */
export async function currentStatus(
  ctx: PlanContext,
  step: StepContext,
  workgroupId: string,
  workspaceId: string,
  listed: string | undefined,
): Promise<string | undefined> {
  if (step.attempt === 1) return listed;
  await ctx.fleet.refresh();
  return ctx.fleet.workspace(workgroupId, workspaceId)?.status ?? undefined;
}

/**
 * Calls a mutating operation; when the API refuses it for good, re-reads the workspace and
 * returns the status if it shows the change already made (or under way), so a refusal of an
 * "already there" request is success, not failure. A throttled re-read throws its throttle: the
 * step is tried again after the wait, uncounted, and the refusal looked at anew.
 */
export async function mutateUnlessAlready(
  ctx: PlanContext,
  workgroupId: string,
  workspaceId: string,
  already: readonly string[],
  call: () => Promise<unknown>,
): Promise<string | undefined> {
  try {
    await call();
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiError) || error.retryable) throw error;
    await ctx.fleet.refresh();
    const status = ctx.fleet.workspace(workgroupId, workspaceId)?.status ?? undefined;
    if (status && already.includes(status)) return status;
    throw error;
  }
}
