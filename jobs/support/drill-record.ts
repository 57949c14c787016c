import { z } from 'zod';
import { ApiError } from '../../src/api/index.js';

/** How the drill left its workspace afterwards. */
export const AfterwardsSchema = z.object({
  requested: z.enum(['pause', 'leave']),
  outcome: z.enum(['paused', 'already-paused', 'not-paused', 'left']),
  reason: z.string().optional(),
  requestId: z.string().optional(),
});
export type Afterwards = z.output<typeof AfterwardsSchema>;

/**
 * One restore call, written before it is sent (`sent`) and again once it is answered: `accepted`,
 * `already-restoring` (refused, and the workspace found Restoring), `refused` (for good), `failed`
 * (an answer worth trying again: a 5xx, a throttle), or `unanswered` (a time-out or a network
 * error: it may still have been applied). A call still `sent` is one whose execution stopped
 * before it heard the answer.
 */
export const RestoreCallSchema = z.object({
  /** Which execution of the drill sent it: 1 for the first delivery of the run, 2 for the one that took it over… */
  execution: z.int().positive(),
  sentAt: z.number(),
  answeredAt: z.number().optional(),
  outcome: z.enum(['sent', 'accepted', 'already-restoring', 'refused', 'failed', 'unanswered']),
  requestId: z.string().optional(),
  error: z.string().optional(),
});
export type RestoreCall = z.output<typeof RestoreCallSchema>;

/**
 * What the drill did so far, kept in the run's checkpoint: it outlives a failed attempt and a
 * takeover by another worker, so either continues where the drill stopped (a restore the API
 * accepted is never sent again). Times are epoch ms on the clock of the execution that wrote them.
 */
export const DrillRecordSchema = z.object({
  attempts: z.int().nonnegative(),
  /** How many executions (deliveries of the run) worked on the drill: more than 1 after a takeover. */
  executions: z.int().nonnegative().default(0),
  startedAt: z.string().optional(),
  resumedFirst: z.boolean(),
  restoreFoundUnderWay: z.boolean(),
  /** When the first restore call was sent (or the restore found under way). */
  restoreStartedAt: z.number().optional(),
  /** The workspace's record as the restore was sent: an Active on a changed record is the restored workspace. */
  restoredOver: z.object({ version: z.number().nullable(), lastModified: z.string().nullable() }).optional(),
  /** Set once the API accepted the restore. */
  restoreAccepted: z.boolean().optional(),
  /** When the accepted restore call was answered, and which execution heard the answer. */
  restoreAcceptedAt: z.number().optional(),
  restoreAcceptedBy: z.int().positive().optional(),
  /** Every restore call, whichever execution sent it. */
  restoreCalls: z.array(RestoreCallSchema).default([]),
  /** The first poll that showed the workspace restored, and the execution that made it. */
  restoredAt: z.number().optional(),
  restoredBy: z.int().positive().optional(),
  /**
   * Whether that execution watched the restore finish: it had seen the workspace not yet restored,
   * or heard the restore accepted itself. Otherwise the restore ended while no execution looked
   * (its worker had died) and `restoredAt` only bounds when.
   */
  restoreWatched: z.boolean().optional(),
  resumeRequestIds: z.array(z.string()),
  restoreRequestIds: z.array(z.string()),
  observed: z.object({ vertices: z.number().nullable(), edges: z.number().nullable() }).optional(),
  /** The message of a count check that failed. */
  countMismatch: z.string().optional(),
  /** Why the latest attempt failed: the drill's failure when retries run out before a verdict. */
  lastFailure: z.string().optional(),
  /** Set once the drill itself is over (restored and checked, or failed for good). */
  verdict: z
    .union([
      z.object({ passed: z.literal(true) }),
      z.object({ passed: z.literal(false), failure: z.string() }),
    ])
    .optional(),
  afterwards: AfterwardsSchema.optional(),
});
export type DrillRecord = z.output<typeof DrillRecordSchema>;

/** Makes an API call, adding the request ID of its answer, or of its refusal, to `ids`. */
export async function keepingRequestId<T extends { requestId: string | undefined }>(
  ids: string[],
  call: () => Promise<T>,
): Promise<T> {
  try {
    const answer = await call();
    if (answer.requestId) ids.push(answer.requestId);
    return answer;
  } catch (error) {
    if (error instanceof ApiError && error.requestId) ids.push(error.requestId);
    throw error;
  }
}

/** What came of a restore call that threw. */
function failedCall(error: unknown): RestoreCall['outcome'] {
  if (!(error instanceof ApiError)) return 'failed';
  if (error.status === undefined) return 'unanswered';
  return error.retryable ? 'failed' : 'refused';
}

/**
 * Makes the restore call `call` describes (already in the record, as `sent`) and writes its answer
 * into it: when, what, the request ID, the error. What the call throws is thrown again.
 */
export async function answering<T extends { requestId: string | undefined }>(
  call: RestoreCall,
  now: () => Date,
  send: () => Promise<T>,
): Promise<T> {
  try {
    const answer = await send();
    Object.assign(call, { outcome: 'accepted', answeredAt: now().getTime() });
    if (answer.requestId) call.requestId = answer.requestId;
    return answer;
  } catch (error) {
    const outcome = failedCall(error);
    if (outcome !== 'unanswered') call.answeredAt = now().getTime();
    Object.assign(call, { outcome, error: describeError(error) });
    if (error instanceof ApiError && error.requestId) call.requestId = error.requestId;
    throw error;
  }
}

/** The record of a drill not tried yet. */
export function newDrillRecord(): DrillRecord {
  return {
    attempts: 0,
    executions: 0,
    resumedFirst: false,
    restoreFoundUnderWay: false,
    restoreCalls: [],
    resumeRequestIds: [],
    restoreRequestIds: [],
  };
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Time to restore: from the answer to the accepted restore call to the first poll that showed the
 * workspace restored, whichever executions heard the one and made the other, when one of them
 * watched the restore finish (accurate to a poll interval). Null when none did (the restore ended
 * while its worker was dead), or when the acceptance was never heard (the restore was found under
 * way, or its execution stopped before it heard the answer).
 */
export function timeToRestoreMs(record: DrillRecord): number | null {
  const { restoreAcceptedAt, restoredAt, restoreWatched } = record;
  if (!restoreWatched || restoreAcceptedAt === undefined || restoredAt === undefined) return null;
  return restoredAt - restoreAcceptedAt;
}

/** What no measure of time to restore leaves known: it took at most this long (null when not even that is known). */
function timeToRestoreAtMostMs(record: DrillRecord): number | null {
  const from = record.restoreAcceptedAt ?? record.restoreStartedAt;
  return from === undefined || record.restoredAt === undefined ? null : record.restoredAt - from;
}

/** Request IDs the record holds: every resume, restore and pause of the drill, whichever execution made it. */
export function recordedRequestIds(record: DrillRecord): string[] {
  const pause = record.afterwards?.requestId;
  return [...record.resumeRequestIds, ...record.restoreRequestIds, ...(pause ? [pause] : [])];
}

/** What was drilled, as the evidence names it. */
export interface DrillSubject {
  backupId: string;
  workgroupId: string | null;
  workgroupName: string;
  workspaceId: string | null;
  workspaceName: string;
  expected: unknown;
  /** Why the drill could not start (the workspace not found). */
  problem: string | undefined;
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** The run's evidence record: docs/actions.md, "restore-drill", lists every field. */
export function drillEvidence(subject: DrillSubject, record: DrillRecord): Record<string, unknown> {
  const { verdict } = record;
  const passed = verdict?.passed ?? false;
  const unsettled = record.lastFailure
    ? `not settled after ${record.attempts} attempt(s): ${record.lastFailure}`
    : 'the drill did not finish';
  const measured = timeToRestoreMs(record);
  const { expected, problem, ...drilled } = subject;
  return {
    ...drilled,
    passed,
    failure: verdict && !verdict.passed ? verdict.failure : passed ? undefined : (problem ?? unsettled),
    startedAt: record.startedAt ?? null,
    executions: record.executions,
    takenOver: record.executions > 1,
    resumedFirst: record.resumedFirst,
    restoreFoundUnderWay: record.restoreFoundUnderWay,
    restoreStartedAt: iso(record.restoreStartedAt),
    restoreAcceptedAt: iso(record.restoreAcceptedAt),
    restoreAcceptedBy: record.restoreAcceptedBy ?? null,
    restoredAt: iso(record.restoredAt),
    restoredBy: record.restoredBy ?? null,
    timeToRestoreMs: measured,
    ...(measured === null ? { timeToRestoreAtMostMs: timeToRestoreAtMostMs(record) } : {}),
    counts: { observed: record.observed ?? null, expected },
    resumeRequestIds: record.resumeRequestIds,
    restoreRequestIds: record.restoreRequestIds,
    restoreCalls: record.restoreCalls.map((call) => ({
      ...call,
      sentAt: iso(call.sentAt),
      answeredAt: iso(call.answeredAt),
    })),
    afterwards: record.afterwards ?? null,
  };
}
