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
import { mutateUnlessAlready, type Observed, observe, observeAfresh } from './workspace-state.js';

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
 * A paused workspace this owner's record is about, as a step reports it: a pause this run's
 * earlier execution (or an earlier run's lost answer) made is this owner's, confirmed with its
 * intent's time, and reported with the request ID on record. Undefined when the pause is not
 * demonstrably this owner's: an intent the listing may predate, or anyone else's record.
 */
export async function earlierPause(
  ctx: ActionContext,
  key: string,
  record: Ownership | undefined,
  observed: Observed,
): Promise<StepResult | undefined> {
  const { ownership } = ctx;
  if (!ownership || !record || record.owner !== ownership.owner) return undefined;
  const earlierRequestIds = record.requestId ? [record.requestId] : [];
  if (record.state === 'intent') {
    // a listing asked for after the intent shows the pause: the intent's call made it
    if (observed.stamp.seq === undefined || (record.intentSeq ?? 0) > observed.stamp.seq) return undefined;
    await ownership.confirm(key, undefined, record.intendedAt);
    const by =
      record.runId === ctx.runId
        ? 'this run before (a lost answer, or a worker that stopped)'
        : `run ${record.runId}`;
    return {
      outcome: 'succeeded',
      reason: `paused by ${by}: its intent was recorded before the call`,
      earlierRequestIds,
      status: observed.status,
    };
  }
  if (record.runId !== ctx.runId) return undefined;
  return {
    outcome: 'succeeded',
    reason: `paused by an earlier execution of this run (${observed.status ?? 'paused'} now)`,
    earlierRequestIds,
    status: observed.status,
  };
}

/**
 * Pauses a workspace that is Active and records the pause as the run's owner's: an intent written
 * before the call, confirmed once the API accepted it. What the ledger already says of the
 * workspace is ordered against the listing by evidence (`judgeRunning`), never by clocks: a pause
 * undone since (someone started it) or that never took is recorded anew; one the listing may
 * predate is looked at again with a fresh listing. A refusal ends the intent only when nothing of
 * this owner's can have paused the workspace.
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
  let observed = await observe(ctx, step, ws.workgroupId, ws.workspaceId, ws.status);
  for (let look = 1; ; look++) {
    const record = await ownership?.get(key);
    if (observed.status && PAUSED.includes(observed.status))
      return (
        (await earlierPause(ctx, key, record, observed)) ?? {
          outcome: 'skipped',
          reason: pauseSkipReason(observed.status, record) ?? `already ${observed.status}`,
        }
      );
    if (observed.status !== STATUS.active || !ownership || !record) break;
    const verdict = ownership.judge(record, observed.stamp);
    // a pause undone since ends; an intent that never took stays, replaced by the one below, which
    // then owns what it finds: the old call's answer is unknown, and it may land yet
    if (verdict === 'undone') await ownership.seenRunning(key, observed.stamp);
    if (verdict !== 'unknown') break;
    if (look > 1)
      return {
        outcome: 'skipped',
        reason: `${describeOwnership(record)}; no listing asked for since shows whether that pause still holds`,
      };
    observed = await observeAfresh(ctx, ws.workgroupId, ws.workspaceId);
  }
  if (observed.status !== STATUS.active)
    return { outcome: 'skipped', reason: `not Active: ${observed.status ?? 'unknown'}` };
  if (!ownership) return pauseUnowned(ctx, ws, step);

  const intent = await ownership.intend(ws);
  if (!intent.written)
    return { outcome: 'skipped', reason: `already paused (${describeOwnership(intent.prior)})` };
  const { prior } = intent;
  let requestId: string | undefined;
  let already: string | undefined;
  try {
    already = await mutateUnlessAlready(ctx, ws.workgroupId, ws.workspaceId, PAUSED, async () => {
      ({ requestId } = await ctx.api.pauseWorkspace(ws.workgroupId, ws.workspaceId, { signal: step.signal }));
    });
  } catch (error) {
    // Refused for good and not paused: nothing to own, unless an earlier pause of this owner's is
    // still unknown. A transient failure keeps the intent (the pause may have gone through: a later
    // listing decides), and so does a call cut short by the end of this execution.
    if (!isTransient(error) && !step.signal.aborted && !prior) await ownership.refused(key, intent.record);
    throw error;
  }
  if (already && !prior) {
    // refused because someone else paused it meanwhile: theirs, not ours
    await ownership.refused(key, intent.record);
    return { outcome: 'skipped', reason: `already ${already}`, status: already };
  }
  if (already && prior) {
    // an earlier call of this owner's, whose answer was lost, made the pause
    await ownership.confirm(key, undefined, prior.intendedAt);
    return {
      outcome: 'succeeded',
      reason: `paused by an earlier attempt of this run (now ${already})`,
      status: already,
    };
  }
  await ownership.confirm(key, requestId);
  return { outcome: 'succeeded', status: STATUS.stopping };
}

/** A pause without the ledger (no Redis): made, never owned. */
async function pauseUnowned(
  ctx: ActionContext,
  ws: SelectedWorkspace,
  step: StepContext,
): Promise<StepResult> {
  const already = await mutateUnlessAlready(ctx, ws.workgroupId, ws.workspaceId, PAUSED, () =>
    ctx.api.pauseWorkspace(ws.workgroupId, ws.workspaceId, { signal: step.signal }),
  );
  return already
    ? { outcome: 'skipped', reason: `already ${already}`, status: already }
    : { outcome: 'succeeded', status: STATUS.stopping };
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
  const { status, stamp } = await observe(ctx, step, ws.workgroupId, ws.workspaceId, ws.status);
  if (status && COMING_UP.includes(status)) {
    await ctx.ownership?.seenRunning(key, stamp);
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
    result: already
      ? { outcome: 'skipped', reason: `already ${already}`, status: already }
      : { outcome: 'succeeded', status: STATUS.resuming },
    coming: true,
  };
}
