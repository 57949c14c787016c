import {
  type ActionContext,
  describeHold,
  type Hold,
  holdFor,
  type Ownership,
  type PlanContext,
  type SelectedWorkspace,
  STATUS,
  type StepContext,
  type StepResult,
  workspaceRef,
} from '../../src/engine/index.js';
import { currentStatus, mutateUnlessAlready } from './workspace-state.js';

/**
 * The pause and resume steps every cost-saving action shares (`pause`, `resume`, windows), with
 * the ownership ledger: a pause is written as an intent before its call and confirmed after it,
 * a resume ends ownership, and a workspace seen running is nobody's pause any more.
 */

export const PAUSED: readonly string[] = [STATUS.stopping, STATUS.stopped];
const COMING_UP: readonly string[] = [STATUS.resuming, STATUS.active];

/** The hold in force on a workspace when the run started, if any (none when holds are unknown). */
export function holdOn(ctx: PlanContext, ws: SelectedWorkspace): Hold | undefined {
  return ctx.holds ? holdFor(ctx.holds, ws, ctx.now()) : undefined;
}

/** `paused by evening-pause since …`, for reasons that say whose pause it is. */
export function describeOwnership(record: Ownership): string {
  const since = record.pausedAt ?? record.intendedAt;
  return `paused by ${record.ownerKind} ${record.owner} since ${since}`;
}

/** What a pause would do to a workspace in `status`, in the same words for the plan and the run. */
function pauseSkipReason(status: string | undefined, record: Ownership | undefined): string | undefined {
  if (status === STATUS.active) return undefined;
  if (status && PAUSED.includes(status))
    return record?.state === 'confirmed'
      ? `already ${status} (${describeOwnership(record)})`
      : `already ${status}`;
  return `not Active: ${status ?? 'unknown'}`;
}

/** A pause as a plan shows it: read-only. */
export async function planPause(ctx: PlanContext, ws: SelectedWorkspace): Promise<StepResult> {
  const hold = holdOn(ctx, ws);
  if (hold?.state === 'active') return { outcome: 'skipped', reason: describeHold(hold) };
  const record = await ctx.ownership?.get(workspaceRef(ws).key);
  const skip = pauseSkipReason(ws.status, record);
  return skip ? { outcome: 'skipped', reason: skip } : { outcome: 'planned', reason: 'would pause (Active)' };
}

/**
 * Pauses a workspace that is Active and records the pause as the run's owner's. A workspace
 * found paused is the owner's only if this owner's intent to pause it was written first (an
 * attempt whose answer was lost, a worker that died after its call): then the pause is confirmed
 * as its own. Anything else found paused was paused by someone else and is never owned.
 */
export async function pauseStep(
  ctx: ActionContext,
  ws: SelectedWorkspace,
  step: StepContext,
): Promise<StepResult> {
  const key = workspaceRef(ws).key;
  const hold = holdOn(ctx, ws);
  if (hold?.state === 'active') return { outcome: 'skipped', reason: describeHold(hold) };
  const { ownership } = ctx;
  const status = await currentStatus(ctx, step, ws.workgroupId, ws.workspaceId, ws.status);
  const record = await ownership?.get(key);
  const intended = record !== undefined && record.owner === ownership?.owner && record.state === 'intent';

  if (status && PAUSED.includes(status)) {
    if (ownership && intended) {
      await ownership.confirm(key, undefined);
      const by =
        record.runId === ctx.runId
          ? 'this run before (a lost answer, or a worker that stopped)'
          : `run ${record.runId}`;
      return { outcome: 'succeeded', reason: `paused by ${by}: its intent was recorded before the call` };
    }
    return { outcome: 'skipped', reason: pauseSkipReason(status, record) ?? `already ${status}` };
  }
  if (status !== STATUS.active) return { outcome: 'skipped', reason: `not Active: ${status ?? 'unknown'}` };

  const earlierAttempt = intended && record.runId === ctx.runId;
  // running: a pause recorded earlier was undone by whoever started it, unless the listing is
  // only older than that pause
  if (ownership && record && !earlierAttempt && !(await ownership.seenActive(key, ctx.fleet.listedAt)))
    return {
      outcome: 'skipped',
      reason: `${describeOwnership(record)}, later than the listing that shows it Active`,
    };
  await ownership?.intend(ws);
  let requestId: string | undefined;
  let already: string | undefined;
  try {
    already = await mutateUnlessAlready(ctx, ws.workgroupId, ws.workspaceId, PAUSED, async () => {
      ({ requestId } = await ctx.api.pauseWorkspace(ws.workgroupId, ws.workspaceId, { signal: step.signal }));
    });
  } catch (error) {
    // refused for good and not paused: nothing to own. A transient failure keeps the intent: the
    // pause may have gone through, and the next attempt (or a later run) finds out. So does a call
    // cut short by the run's end (a worker closing past its grace): the worker that resumes the
    // run finds the intent, and owns the pause instead of taking it for someone else's.
    if (!isTransient(error) && !step.signal.aborted) await ownership?.abandon(key);
    throw error;
  }
  if (already && !earlierAttempt) {
    // refused because someone else paused it meanwhile: theirs, not ours
    await ownership?.abandon(key);
    return { outcome: 'skipped', reason: `already ${already}` };
  }
  await ownership?.confirm(key, requestId);
  return already
    ? { outcome: 'succeeded', reason: `paused by an earlier attempt of this run (now ${already})` }
    : { outcome: 'succeeded' };
}

function isTransient(error: unknown): boolean {
  return (error as { retryable?: unknown } | undefined)?.retryable === true;
}

/** Why a workspace in `status` is not resumed; none when it is Stopped. */
export function resumeSkipReason(status: string | undefined): string | undefined {
  if (status === STATUS.stopped) return undefined;
  return status === STATUS.active || status === STATUS.resuming
    ? `already ${status}`
    : `not Stopped: ${status ?? 'unknown'}`;
}

/** What became of a resume step, for the caller to wait on and report. */
export interface ResumeStepResult {
  result: StepResult;
  /** The resume was sent (or was already under way): the caller may wait for the workspace. */
  coming: boolean;
}

/**
 * Resumes a Stopped workspace and ends nightshift's ownership of its pause. A workspace found
 * running or coming up is nobody's pause any more either. A failed resume keeps ownership, so
 * the next resume tries again.
 */
export async function resumeStep(
  ctx: ActionContext,
  ws: SelectedWorkspace,
  step: StepContext,
): Promise<ResumeStepResult> {
  const key = workspaceRef(ws).key;
  const status = await currentStatus(ctx, step, ws.workgroupId, ws.workspaceId, ws.status);
  if (status && COMING_UP.includes(status)) {
    await ctx.ownership?.seenActive(key, ctx.fleet.listedAt);
    return {
      result: { outcome: 'skipped', reason: `already ${status}` },
      coming: status === STATUS.resuming,
    };
  }
  const skip = resumeSkipReason(status);
  if (skip) return { result: { outcome: 'skipped', reason: skip }, coming: false };
  const already = await mutateUnlessAlready(ctx, ws.workgroupId, ws.workspaceId, COMING_UP, () =>
    ctx.api.resumeWorkspace(ws.workgroupId, ws.workspaceId, { signal: step.signal }),
  );
  await ctx.ownership?.resumed(key);
  return {
    result: already ? { outcome: 'skipped', reason: `already ${already}` } : { outcome: 'succeeded' },
    coming: true,
  };
}
