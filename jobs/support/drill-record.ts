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
 * What the drill did so far, kept in the run's checkpoint: it outlives a failed attempt and a
 * takeover by another worker, so either continues where the drill stopped (a restore the API
 * accepted is never sent again).
 */
export const DrillRecordSchema = z.object({
  attempts: z.int().nonnegative(),
  startedAt: z.string().optional(),
  resumedFirst: z.boolean(),
  restoreFoundUnderWay: z.boolean(),
  /** When the restore was sent (or found under way), epoch ms. */
  restoreStartedAt: z.number().optional(),
  /** The workspace's record as the restore was sent: an Active on a changed record is the restored workspace. */
  restoredOver: z.object({ version: z.number().nullable(), lastModified: z.string().nullable() }).optional(),
  /** Set once the API accepted the restore. */
  restoreAccepted: z.boolean().optional(),
  restoredAt: z.number().optional(),
  resumeRequestIds: z.array(z.string()),
  restoreRequestIds: z.array(z.string()),
  observed: z.object({ vertices: z.number().nullable(), edges: z.number().nullable() }).optional(),
  /** The message of a count check that failed. */
  countMismatch: z.string().optional(),
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
export async function keepingRequestId(
  ids: string[],
  call: () => Promise<{ requestId: string | undefined }>,
): Promise<void> {
  try {
    const { requestId } = await call();
    if (requestId) ids.push(requestId);
  } catch (error) {
    if (error instanceof ApiError && error.requestId) ids.push(error.requestId);
    throw error;
  }
}

/** The record of a drill not tried yet. */
export function newDrillRecord(): DrillRecord {
  return {
    attempts: 0,
    resumedFirst: false,
    restoreFoundUnderWay: false,
    resumeRequestIds: [],
    restoreRequestIds: [],
  };
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
