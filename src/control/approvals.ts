import { type ApprovalRecord, approvalEndSummary, type RunSummary } from '../engine/index.js';
import { NightshiftError } from '../errors/index.js';
import type { Approvals } from '../store/index.js';
import type { Clock } from '../time/index.js';
import { type AuditLog, type Origin, recordChange } from './origin.js';

/** No run waits for approval under this id. */
export class UnknownApprovalError extends NightshiftError {
  override name = 'UnknownApprovalError';
  readonly code = 'NS_UNKNOWN_APPROVAL';

  constructor(readonly runId: string) {
    super(`no run "${runId}" is waiting for approval`);
  }
}

/** The job names its approvers, and the person deciding is not among them. */
export class NotAnApproverError extends NightshiftError {
  override name = 'NotAnApproverError';
  readonly code = 'NS_NOT_AN_APPROVER';

  constructor(
    readonly who: string,
    readonly approvers: readonly string[],
  ) {
    super(`${who} may not decide this run: its job names its approvers (${approvers.join(', ')})`);
  }
}

export interface ApprovalPorts {
  readonly approvals: Pick<Approvals, 'get' | 'decide' | 'forget'>;
  /** Queues the approved run again, for the round approved. */
  readonly queueApproved: (record: ApprovalRecord) => Promise<void>;
  /** Records a run its approval ended (rejected, expired) in the run history. */
  readonly recordEnded: (summary: RunSummary) => Promise<void>;
  readonly audit: AuditLog;
  readonly clock: Clock;
}

/** Where a decision left the run: approved (queued to act), rejected, expired, or decided before. */
export interface DecisionResult {
  readonly runId: string;
  readonly state: ApprovalRecord['state'];
  /** This call decided it (false: it was decided before, or had expired). */
  readonly decided: boolean;
  readonly record: ApprovalRecord;
}

async function decide(
  ports: ApprovalPorts,
  runId: string,
  state: 'approved' | 'rejected',
  note: string | undefined,
  origin: Origin,
): Promise<DecisionResult> {
  const record = await ports.approvals.get(runId);
  if (!record) throw new UnknownApprovalError(runId);
  if (record.approvers.length > 0 && !record.approvers.includes(origin.who))
    throw new NotAnApproverError(origin.who, record.approvers);
  const result = await ports.approvals.decide(runId, record.round, { state, by: origin.who, note });
  if ('refused' in result) {
    if (result.refused === 'unknown') throw new UnknownApprovalError(runId);
    if (result.refused === 'expired') await endRun(ports, result.record, 'expired');
    return { runId, state: result.record.state, decided: false, record: result.record };
  }
  if (state === 'approved') await ports.queueApproved(result);
  else await endRun(ports, result, 'rejected');
  await recordChange(ports.audit, origin, state === 'approved' ? 'approve' : 'reject', runId, {
    why: note,
    details: { job: result.job, round: result.round, changes: result.plan.length },
  });
  return { runId, state: result.state, decided: true, record: result };
}

async function endRun(ports: ApprovalPorts, record: ApprovalRecord, outcome: 'rejected' | 'expired') {
  const reason =
    outcome === 'rejected'
      ? `rejected by ${record.decision?.by ?? 'someone'}${record.decision?.note ? `: ${record.decision.note}` : ''}; nothing done`
      : `no approval before ${record.expiresAt}: nothing done`;
  await ports.recordEnded(approvalEndSummary(record, outcome, reason, new Date(ports.clock.now())));
  await ports.approvals.forget(record.runId);
}

/**
 * Approves a run waiting for it: the run is queued again and acts if its plan then asks for
 * nothing more than the plan approved. Refused (typed errors) for an unknown run or a person the
 * job does not name; a run past its expiry is ended `expired` instead.
 */
export function approveRun(
  ports: ApprovalPorts,
  runId: string,
  { note }: { note?: string | undefined },
  origin: Origin,
): Promise<DecisionResult> {
  return decide(ports, runId, 'approved', note, origin);
}

/** Rejects a run waiting for approval: it ends `rejected`, having done nothing. */
export function rejectRun(
  ports: ApprovalPorts,
  runId: string,
  { note }: { note?: string | undefined },
  origin: Origin,
): Promise<DecisionResult> {
  return decide(ports, runId, 'rejected', note, origin);
}
