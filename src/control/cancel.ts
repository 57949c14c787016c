import type { Cancellation, RunSummary } from '../engine/index.js';
import { NightshiftError } from '../errors/index.js';
import type { Approvals, RunCancellations } from '../store/index.js';
import { type AuditLog, type Origin, recordChange } from './origin.js';

/** What asking to cancel a run found, and did. */
export interface CancelResult {
  readonly runId: string;
  /** `cancelling`: asked for now or before, the run still going; `finished`: it ended first. */
  readonly state: 'cancelling' | 'cancelled' | 'finished';
  /** This call asked for the cancel (false: someone asked before, or the run had ended). */
  readonly requested: boolean;
  readonly cancellation?: Cancellation | undefined;
  /** The run's outcome, once it has one. */
  readonly outcome?: string;
  /** The job the run belongs to, when it is still queued or running. */
  readonly job?: string;
}

export interface CancelPorts {
  readonly history: { get(runId: string): Promise<RunSummary | undefined> };
  /** The run's queue entry while it is queued or running: its job. */
  readonly queued: (runId: string) => Promise<{ job: string } | undefined>;
  readonly cancellations: Pick<RunCancellations, 'request'>;
  /** Where the run's approval stands, for a run recorded as awaiting one. */
  readonly approvals: Pick<Approvals, 'get'>;
  readonly audit: AuditLog;
}

/** A run that is neither queued nor recorded. */
export class UnknownRunError extends NightshiftError {
  override name = 'UnknownRunError';
  readonly code = 'NS_UNKNOWN_RUN';

  constructor(readonly runId: string) {
    super(`no run "${runId}" in the queue or the history`);
  }
}

/** The run waits for a person's approval: nothing runs until someone approves it, and `reject` ends it. */
export class RunAwaitingApprovalError extends NightshiftError {
  override name = 'RunAwaitingApprovalError';
  readonly code = 'NS_RUN_AWAITING_APPROVAL';

  constructor(readonly runId: string) {
    super(
      `run "${runId}" is waiting for approval and does nothing until approved: \`nightshift reject ${runId}\` ends it`,
    );
  }
}

/**
 * Asks a queued or running run to stop; a run already recorded is reported as it ended. Only a
 * request this call made is recorded in the audit trail.
 */
export async function requestCancel(
  ports: CancelPorts,
  runId: string,
  { reason }: { reason?: string | undefined },
  origin: Origin,
): Promise<CancelResult> {
  const recorded = await ports.history.get(runId);
  if (recorded?.outcome === 'awaiting-approval') {
    // approved, its run is queued or running under its round's id: the cancel key stops it alike
    const approval = await ports.approvals.get(runId);
    if (approval?.state !== 'approved') throw new RunAwaitingApprovalError(runId);
    return request(ports, runId, reason, origin, approval.job);
  }
  if (recorded)
    return recorded.outcome === 'cancelled'
      ? {
          runId,
          state: 'cancelled',
          requested: false,
          cancellation: recorded.cancellation,
          outcome: 'cancelled',
        }
      : { runId, state: 'finished', requested: false, outcome: recorded.outcome };
  const queued = await ports.queued(runId);
  if (!queued) throw new UnknownRunError(runId);
  return request(ports, runId, reason, origin, queued.job);
}

async function request(
  ports: CancelPorts,
  runId: string,
  reason: string | undefined,
  origin: Origin,
  job: string,
): Promise<CancelResult> {
  const { requested, cancellation } = await ports.cancellations.request(runId, { by: origin.who, reason });
  if (requested) await recordChange(ports.audit, origin, 'cancel', runId, { why: reason, details: { job } });
  return { runId, state: 'cancelling', requested, cancellation, job };
}
