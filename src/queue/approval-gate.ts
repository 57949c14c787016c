import type { Queue } from 'bullmq';
import {
  type ApprovalRecord,
  approvalEndSummary,
  approvalNote,
  type CheckpointStore,
  describePlan,
  executeRun,
  type PlannedChange,
  plannedChanges,
  type RunDependencies,
  type RunIdentity,
  type RunRequest,
  type RunSummary,
  unapprovedChanges,
} from '../engine/index.js';
import type { Logger } from '../log/index.js';
import type { Approval, PolicyJob } from '../policy/index.js';
import type { Approvals } from '../store/index.js';
import type { Clock } from '../time/index.js';
import { approvalJobId, type RunJobData, RunJobDataSchema, type RunJobResult } from './run-queue.js';

export interface ApprovalGateOptions {
  approvals: Approvals;
  /** Where a run's expiry is queued (delayed until it). */
  queue: Pick<Queue<RunJobData, RunJobResult>, 'add'>;
  clock: Clock;
  log: Logger;
}

/** What the run would do now: its dry run, under an id of its own so it leaves the run's checkpoints alone. */
export async function dryRunPlan(
  deps: RunDependencies,
  request: RunRequest,
  checkpoints: Pick<CheckpointStore, 'clear'>,
): Promise<RunSummary> {
  const runId = `${request.runId}~plan`;
  try {
    return await executeRun(deps, { ...request, runId, dryRun: true });
  } finally {
    await checkpoints.clear(runId);
  }
}

/** `awaiting approval until …, by one of …: 3 changes: …; nightshift approve <runId>` */
function awaitingReason(record: ApprovalRecord): string {
  const who = record.approvers.length > 0 ? ` by one of ${record.approvers.join(', ')}` : '';
  const changed = record.changedSince
    ? `the plan changed since it was approved (${record.changedSince.length} ${record.changedSince.length === 1 ? 'change' : 'changes'} not approved: ${record.changedSince.slice(0, 3).join('; ')}); `
    : '';
  return `${changed}awaiting approval${who} until ${record.expiresAt}: ${describePlan(record.plan)}; \`nightshift approve ${record.runId}\` or \`nightshift reject ${record.runId}\``;
}

/**
 * Holds the runs of jobs with `approval:` until a person approves their plan. A run asks when it
 * is first admitted: its dry run's plan is kept with the request, the run is recorded
 * `awaiting-approval`, and its expiry is queued. Approved, it is queued again; that delivery acts
 * only if its plan now asks for nothing the approved plan did not (doing less is fine), else it
 * asks again, with the difference.
 */
export class ApprovalGate {
  readonly #options: ApprovalGateOptions;

  constructor(options: ApprovalGateOptions) {
    this.#options = options;
  }

  /**
   * For an admitted run that acts (not a dry run): undefined when it may act now (no approval
   * needed, or approved and its plan within what was approved); else the summary to record:
   * awaiting approval, or failed when no plan could be made.
   */
  async judge(
    data: RunJobData,
    job: PolicyJob,
    identity: RunIdentity,
    plan: () => Promise<RunSummary>,
  ): Promise<RunSummary | undefined> {
    const { approval } = job;
    if (!approval) return undefined;
    const { approvals, log } = this.#options;
    const record = await approvals.get(data.runId);
    const approved = record?.state === 'approved' && record.round === data.approval?.round;
    if (record && approved && data.approval?.step === 'act') {
      const planned = await plan();
      const extra = unapprovedChanges(record.plan, plannedChanges(planned));
      if (extra.length === 0) {
        log.info(
          { approvedBy: record.decision?.by, round: record.round },
          'run approved: acting on its plan',
        );
        return undefined;
      }
      log.warn(
        { changes: extra.length, round: record.round },
        'plan changed since its approval: asking again',
      );
      return this.#ask(data, approval, job, identity, planned, {
        round: record.round + 1,
        changedSince: extra,
      });
    }
    // a pending request of this run: an earlier execution asked, and stopped before it was recorded
    const pending = record?.state === 'pending' && !data.approval ? record : undefined;
    const planned = await plan();
    // nobody can approve a plan that could not be made (the fleet unlisted, maxTargets passed)
    if (planned.outcome === 'failed')
      return {
        ...planned,
        runId: identity.runId,
        dryRun: false,
        reason: `no plan to approve: ${planned.reason ?? planned.error?.message ?? 'its dry run failed'}; nothing done`,
      };
    return this.#ask(data, approval, job, identity, planned, {
      round: pending?.round ?? (record?.round ?? 0) + 1,
      ...(pending ? { keep: pending } : {}),
    });
  }

  /** The approved run has acted (or ended trying): its summary names who approved it, and the approval is done with. */
  async acted(summary: RunSummary): Promise<RunSummary> {
    const record = await this.#options.approvals.get(summary.runId);
    await this.#options.approvals.forget(summary.runId);
    return record ? { ...summary, approval: approvalNote(record) } : summary;
  }

  /** The run's expiry came: a request still pending is ended `expired`; anything else was decided. */
  async expire(data: RunJobData): Promise<RunSummary | undefined> {
    const round = data.approval?.round;
    if (round === undefined) return undefined;
    const expired = await this.#options.approvals.expire(data.runId, round);
    if (!expired) return undefined;
    this.#options.log.warn({ round }, 'approval expired: the run ends without acting');
    await this.#options.approvals.forget(data.runId);
    const now = new Date(this.#options.clock.now());
    return approvalEndSummary(
      expired,
      'expired',
      `no approval before ${expired.expiresAt}: nothing done`,
      now,
    );
  }

  async #ask(
    data: RunJobData,
    approval: Approval,
    job: PolicyJob,
    identity: RunIdentity,
    planned: RunSummary,
    { round, changedSince, keep }: { round: number; changedSince?: string[]; keep?: ApprovalRecord },
  ): Promise<RunSummary> {
    const { approvals, queue, clock } = this.#options;
    const now = clock.now();
    const plan: PlannedChange[] = plannedChanges(planned);
    const { approval: _approval, overlapWaits: _waits, leaseWaits: _leases, ...run } = data;
    const record: ApprovalRecord = {
      runId: data.runId,
      job: data.job,
      action: job.action,
      trigger: data.trigger,
      ...(data.scheduledAt ? { scheduledAt: data.scheduledAt } : {}),
      state: 'pending',
      round,
      requestedAt: keep?.requestedAt ?? new Date(now).toISOString(),
      expiresAt: keep?.expiresAt ?? new Date(now + approval.expiresMs).toISOString(),
      approvers: [...approval.approvers],
      plan,
      run,
      ...(changedSince ? { changedSince } : {}),
    };
    await approvals.request(record);
    // BullMQ promotes delayed jobs by its own reading of the system's time
    const delay = Math.max(0, Date.parse(record.expiresAt) - Date.now());
    await queue.add(
      data.job,
      { ...run, approval: { round, step: 'expire' } },
      { jobId: approvalJobId(data.runId, round, 'expire'), delay },
    );
    return {
      ...planned,
      runId: identity.runId,
      dryRun: false,
      outcome: 'awaiting-approval',
      reason: awaitingReason(record),
      approval: approvalNote(record),
    };
  }
}

/** Queues an approved run again, to act on the round approved (once: the id is the round's). */
export async function queueApprovedRun(
  queue: Pick<Queue<RunJobData, RunJobResult>, 'add'>,
  record: ApprovalRecord,
): Promise<void> {
  const run = RunJobDataSchema.parse(record.run);
  await queue.add(
    record.job,
    { ...run, approval: { round: record.round, step: 'act' } },
    { jobId: approvalJobId(record.runId, record.round, 'act') },
  );
}
