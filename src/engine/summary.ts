import { z } from 'zod';
import { type RunParameters, RunParametersSchema } from '../policy/index.js';
import { type Cancellation, CancellationSchema } from './cancel.js';

export const TARGET_OUTCOMES = ['succeeded', 'skipped', 'failed', 'planned'] as const;
export type TargetOutcome = (typeof TARGET_OUTCOMES)[number];

export const RUN_OUTCOMES = [
  'succeeded',
  'partial',
  'failed',
  'skipped',
  'missed',
  'cancelled',
  'halted',
  'awaiting-approval',
  'rejected',
  'expired',
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export const RUN_TRIGGERS = ['schedule', 'catch-up', 'manual'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

/** An API failure as a summary keeps it: what a person needs, nothing secret. */
export const ErrorRecordSchema = z.object({
  message: z.string(),
  type: z.string().optional(),
  status: z.number().optional(),
  requestId: z.string().optional(),
  retryable: z.boolean().optional(),
});
export type ErrorRecord = z.infer<typeof ErrorRecordSchema>;

export const FindingSchema = z.object({
  rule: z.string(),
  severity: z.enum(['info', 'warning', 'critical']),
  subject: z.string(),
  message: z.string(),
});
export type Finding = z.infer<typeof FindingSchema>;

export const TargetRecordSchema = z.object({
  /** Stable key of the target within its run: `workgroupId/workspaceId`, or `workgroupId`. */
  key: z.string(),
  workgroupId: z.string().optional(),
  workgroupName: z.string().optional(),
  workspaceId: z.string().optional(),
  workspaceName: z.string().optional(),
  outcome: z.enum(TARGET_OUTCOMES),
  /** Attempts counted against the job's `retry.attempts`; throttled tries are not among them. */
  attempts: z.number().int().nonnegative(),
  /** Tries the API throttled (429, `Quota-Exceed`): each waited and went again uncounted. Absent when none. */
  throttled: z.number().int().positive().optional(),
  /** Why it was skipped, or what a dry run would do. */
  reason: z.string().optional(),
  error: ErrorRecordSchema.optional(),
  requestIds: z.array(z.string()),
  durationMs: z.number().nonnegative().optional(),
  /** Action-specific figures, e.g. time to ready. */
  detail: z.record(z.string(), z.unknown()).optional(),
  /** The workspace's status as the run left it, by evidence (a pause the API accepted: `Stopping`). */
  status: z.string().optional(),
  /** Findings of the target's successful attempt; kept with its checkpoint, gathered into the run's. */
  findings: z.array(FindingSchema).optional(),
});
export type TargetRecord = z.infer<typeof TargetRecordSchema>;

export const RunCountsSchema = z.object({
  total: z.number().int().nonnegative(),
  succeeded: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  planned: z.number().int().nonnegative(),
});
export type RunCounts = z.infer<typeof RunCountsSchema>;

/** What a run's summary says of its approval. */
export const ApprovalNoteSchema = z.object({
  state: z.enum(['pending', 'approved', 'rejected', 'expired']),
  /** How many times the run has asked (a plan that changed since its approval asks again). */
  round: z.int().positive(),
  expiresAt: z.iso.datetime(),
  /** Who may decide; empty: anyone allowed to approve. */
  approvers: z.array(z.string()),
  /** Who approved or rejected it, when, and their note. */
  decision: z.object({ by: z.string(), at: z.iso.datetime(), note: z.string().optional() }).optional(),
  /** What changed since the plan last approved: each change not approved, and what it was. */
  changedSince: z.array(z.string()).optional(),
});
export type ApprovalNote = z.infer<typeof ApprovalNoteSchema>;

/** Outcomes a run is recorded with before its end: it is still to act (awaiting a person's approval). */
export function isFinalOutcome(outcome: RunOutcome): boolean {
  return outcome !== 'awaiting-approval';
}

export const RunSummarySchema = z.object({
  runId: z.string(),
  job: z.string(),
  action: z.string(),
  trigger: z.enum(RUN_TRIGGERS),
  dryRun: z.boolean(),
  /**
   * What the person who started the run gave on top of the job's `with:` (`run --with`), as typed:
   * a secret as its `${NAME}`. Absent when none.
   */
  parameters: RunParametersSchema.optional(),
  /** The tick this run belongs to (ISO, UTC); absent for a manual run. */
  scheduledAt: z.string().optional(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
  outcome: z.enum(RUN_OUTCOMES),
  /** Why the run as a whole was skipped, missed or failed. */
  reason: z.string().optional(),
  error: ErrorRecordSchema.optional(),
  counts: RunCountsSchema,
  targets: z.array(TargetRecordSchema),
  findings: z.array(FindingSchema),
  /** Action-specific record, e.g. a restore drill's evidence. */
  evidence: z.record(z.string(), z.unknown()).optional(),
  /** Request IDs of calls made for the run as a whole (target resolution, shared polls). */
  requestIds: z.array(z.string()),
  /** How many times a worker started this run (more than 1 after a crash or a retry). */
  deliveries: z.number().int().positive().optional(),
  /** The worker this run was taken over from, when its worker died (or stopped) mid-run. */
  takenOverFrom: z.string().optional(),
  /** Who cancelled the run, why and when (outcome `cancelled`). */
  cancellation: CancellationSchema.optional(),
  /** For a job that needs approval: where its approval stands, and who decided. */
  approval: ApprovalNoteSchema.optional(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** Who a run is, as every summary of it names it, whatever became of the run. */
export interface RunIdentity {
  runId: string;
  job: string;
  action: string;
  trigger: RunTrigger;
  dryRun: boolean;
  /** The run's parameters (`run --with`), as typed. */
  parameters?: RunParameters | undefined;
  /** The tick the run belongs to (ISO, UTC); absent for a manual run. */
  scheduledAt?: string;
  /** How many times a worker started the run. */
  deliveries?: number;
  /** The worker the run was taken over from. */
  takenOverFrom?: string;
}

/** How a run ended, as the one who ended it knows it. */
export interface RunEnd {
  /** Absent for a run no worker began (a tick the scheduler skipped or missed): no duration then. */
  startedAt?: Date;
  finishedAt: Date;
  /** Default: from the targets' outcomes (`runOutcome`). */
  outcome?: RunOutcome;
  reason?: string;
  error?: ErrorRecord;
  /** The run's target records, in any order, each with the findings of its successful attempt. */
  targets?: Iterable<TargetRecord>;
  /** Findings about the run as a whole; the targets' own follow them. */
  findings?: readonly Finding[];
  evidence?: Record<string, unknown>;
  /** Request IDs of calls made for the run as a whole. */
  requestIds?: readonly string[];
  cancellation?: Cancellation;
}

/**
 * The one builder of a `RunSummary`: targets sorted by key, their findings hoisted into the
 * run's, counts and (unless given) the outcome derived from them.
 */
export function summarize(run: RunIdentity, end: RunEnd): RunSummary {
  const findings = [...(end.findings ?? [])];
  const targets = [...(end.targets ?? [])]
    // by code unit, not localeCompare: one order whatever the host's locale, and no collation (35 ms of
    // a 10,000-target run's worker CPU in a profile)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ findings: targetFindings, ...record }) => {
      if (targetFindings) findings.push(...targetFindings);
      return record;
    });
  const counts = countTargets(targets);
  return {
    runId: run.runId,
    job: run.job,
    action: run.action,
    trigger: run.trigger,
    dryRun: run.dryRun,
    ...(run.parameters && Object.keys(run.parameters).length > 0 ? { parameters: run.parameters } : {}),
    scheduledAt: run.scheduledAt,
    ...(run.deliveries !== undefined ? { deliveries: run.deliveries } : {}),
    ...(run.takenOverFrom ? { takenOverFrom: run.takenOverFrom } : {}),
    ...(end.startedAt
      ? {
          startedAt: end.startedAt.toISOString(),
          durationMs: Math.max(0, end.finishedAt.getTime() - end.startedAt.getTime()),
        }
      : {}),
    finishedAt: end.finishedAt.toISOString(),
    outcome: end.outcome ?? runOutcome(counts),
    reason: end.reason,
    error: end.error,
    counts,
    targets,
    findings,
    evidence: end.evidence,
    requestIds: [...(end.requestIds ?? [])],
    ...(end.cancellation ? { cancellation: end.cancellation } : {}),
  };
}

/**
 * A run that did nothing: skipped (suspended, its previous run still going, a skip date) or
 * missed (no scheduler ran at its tick). `startedAt` only when a worker had begun it.
 */
export function skippedRunSummary(
  run: RunIdentity,
  reason: string,
  at: { finishedAt: Date; startedAt?: Date },
  outcome: Extract<RunOutcome, 'skipped' | 'missed'> = 'skipped',
): RunSummary {
  return summarize(run, { ...at, outcome, reason });
}

export function countTargets(targets: readonly TargetRecord[]): RunCounts {
  const counts: RunCounts = { total: targets.length, succeeded: 0, skipped: 0, failed: 0, planned: 0 };
  for (const target of targets) counts[target.outcome]++;
  return counts;
}

/**
 * A run's outcome from its targets: failed when every acted-on target failed, partial when
 * some did, succeeded otherwise (a run with nothing to do succeeded: nothing was left undone).
 */
export function runOutcome(counts: RunCounts): RunOutcome {
  if (counts.failed === 0) return 'succeeded';
  return counts.failed === counts.total ? 'failed' : 'partial';
}

/** The part of an error a summary may keep. */
export function errorRecord(error: unknown): ErrorRecord {
  if (error && typeof error === 'object' && 'message' in error) {
    const e = error as {
      message: unknown;
      type?: unknown;
      status?: unknown;
      requestId?: unknown;
      retryable?: unknown;
    };
    return {
      message: String(e.message),
      ...(typeof e.type === 'string' ? { type: e.type } : {}),
      ...(typeof e.status === 'number' ? { status: e.status } : {}),
      ...(typeof e.requestId === 'string' ? { requestId: e.requestId } : {}),
      ...(typeof e.retryable === 'boolean' ? { retryable: e.retryable } : {}),
    };
  }
  return { message: String(error) };
}
