import {
  type ActionContext,
  idempotentStep,
  type ListingStamp,
  type PlanContext,
  type StepContext,
} from '../../src/engine/index.js';

/** A workspace's status, and the stamp of the listing it was read from. */
export interface Observed {
  status: string | undefined;
  stamp: ListingStamp;
}

/**
 * A workspace's status as a step should act on it, with its listing's stamp: the run's listing on
 * the first try, a fresh listing on any later one (the failed try may have changed it). A
 * throttled re-read throws its throttle, which the engine waits out without counting an attempt,
 * as for the step's own calls.
 */
export async function observe(
  ctx: PlanContext,
  step: StepContext,
  workgroupId: string,
  workspaceId: string,
  listed: string | undefined,
): Promise<Observed> {
  if (step.attempt === 1) return { status: listed, stamp: ctx.fleet.first };
  return observeAfresh(ctx, workgroupId, workspaceId);
}

/** Lists the fleet again and reads the workspace's status from that listing. */
export async function observeAfresh(
  ctx: PlanContext,
  workgroupId: string,
  workspaceId: string,
): Promise<Observed> {
  await ctx.fleet.refresh();
  return {
    status: ctx.fleet.workspace(workgroupId, workspaceId)?.status ?? undefined,
    stamp: ctx.fleet.stamp,
  };
}

/** A workspace's status as a step should act on it (see `observe`). */
export async function currentStatus(
  ctx: PlanContext,
  step: StepContext,
  workgroupId: string,
  workspaceId: string,
  listed: string | undefined,
): Promise<string | undefined> {
  return (await observe(ctx, step, workgroupId, workspaceId, listed)).status;
}

/**
 * Calls a mutating operation as an idempotent step whose "already there" is a workspace status:
 * returns the status when the API refused the call and a fresh listing shows one of `already`
 * (the change made, or under way). A throttled re-read throws its throttle: the step is tried
 * again after the wait, uncounted, and the refusal looked at anew.
 */
export async function mutateUnlessAlready(
  ctx: ActionContext,
  workgroupId: string,
  workspaceId: string,
  already: readonly string[],
  call: () => Promise<unknown>,
): Promise<string | undefined> {
  const outcome = await idempotentStep({
    attempt: call,
    isDone: async () => {
      await ctx.fleet.refresh();
      const status = ctx.fleet.workspace(workgroupId, workspaceId)?.status ?? undefined;
      return status !== undefined && already.includes(status) ? status : undefined;
    },
  });
  return outcome.already ? outcome.found : undefined;
}
