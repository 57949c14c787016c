import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  type ApprovalNote,
  ApprovalNoteSchema,
  RUN_TRIGGERS,
  type RunSummary,
  summarize,
} from './summary.js';

/** One change a run's plan says it would make: to which target, and what. */
export const PlannedChangeSchema = z.object({
  key: z.string(),
  /** `workgroup/workspace` by name, for people. */
  name: z.string(),
  /** What a dry run says it would do there, e.g. `would pause`. */
  change: z.string(),
});
export type PlannedChange = z.infer<typeof PlannedChangeSchema>;

/**
 * A run waiting for, or given, a person's approval: its plan as it was shown, and the run itself
 * (its queue data, opaque here) to queue again once approved.
 */
export const ApprovalRecordSchema = ApprovalNoteSchema.extend({
  runId: z.string(),
  job: z.string(),
  action: z.string(),
  trigger: z.enum(RUN_TRIGGERS),
  /** The tick the run belongs to (ISO, UTC); absent for a manual run. */
  scheduledAt: z.iso.datetime().optional(),
  requestedAt: z.iso.datetime(),
  plan: z.array(PlannedChangeSchema),
  /** The run's queue data, queued again (with this round) once approved. */
  run: z.record(z.string(), z.unknown()),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecordSchema>;

/** The changes a dry run's summary plans: its `planned` targets, each with what it would do. */
export function plannedChanges(plan: RunSummary): PlannedChange[] {
  return plan.targets
    .filter((target) => target.outcome === 'planned')
    .map((target) => ({
      key: target.key,
      name:
        target.workspaceName || target.workgroupName
          ? [target.workgroupName ?? target.workgroupId, target.workspaceName ?? target.workspaceId]
              .filter(Boolean)
              .join('/')
          : target.key,
      change: target.reason ?? 'would act',
    }));
}

const changeKey = (change: PlannedChange) => JSON.stringify([change.key, change.change]);

/**
 * What the plan now would do that the approved plan did not say: a target it did not name, or
 * another change to one it did. Doing less than approved needs no new approval.
 */
export function unapprovedChanges(
  approved: readonly PlannedChange[],
  now: readonly PlannedChange[],
): string[] {
  const known = new Set(approved.map(changeKey));
  const before = new Map(approved.map((change) => [change.key, change.change]));
  return now
    .filter((change) => !known.has(changeKey(change)))
    .map((change) => {
      const was = before.get(change.key);
      return was === undefined
        ? `${change.name}: ${change.change} (not in the approved plan)`
        : `${change.name}: ${change.change} (approved: ${was})`;
    });
}

/** A short fingerprint of a plan, for people comparing two (order does not matter). */
export function planDigest(plan: readonly PlannedChange[]): string {
  const lines = plan.map(changeKey).sort();
  return createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 12);
}

/** `3 changes: would pause dev/a, dev/b and 1 more`: a plan in one line, for notes and messages. */
export function describePlan(plan: readonly PlannedChange[], shown = 5): string {
  if (plan.length === 0) return 'no change';
  const named = plan.slice(0, shown).map((change) => `${change.change} ${change.name}`);
  const more = plan.length > shown ? ` and ${plan.length - shown} more` : '';
  return `${plan.length} ${plan.length === 1 ? 'change' : 'changes'}: ${named.join(', ')}${more}`;
}

/** What a run's summary says of its approval record. */
export function approvalNote(record: ApprovalRecord): ApprovalNote {
  const { state, round, expiresAt, approvers, decision, changedSince } = record;
  return {
    state,
    round,
    expiresAt,
    approvers,
    ...(decision ? { decision } : {}),
    ...(changedSince ? { changedSince } : {}),
  };
}

/** The summary of a run its approval ended without acting: rejected, or expired. */
export function approvalEndSummary(
  record: ApprovalRecord,
  outcome: 'rejected' | 'expired',
  reason: string,
  now: Date,
): RunSummary {
  const identity = {
    runId: record.runId,
    job: record.job,
    action: record.action,
    trigger: record.trigger,
    dryRun: false,
    ...(record.scheduledAt ? { scheduledAt: record.scheduledAt } : {}),
  };
  return { ...summarize(identity, { finishedAt: now, outcome, reason }), approval: approvalNote(record) };
}
