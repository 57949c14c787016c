import type {
  ApprovalPorts,
  CancelPorts,
  HoldPorts,
  RunNowPorts,
  SuspensionPorts,
} from '../../../control/index.js';
import type { RunSummary } from '../../../engine/index.js';
import type { Policy, PolicyCheck, RunParameters } from '../../../policy/index.js';
import type {
  AuditTrail,
  OpenFinding,
  PolicyStore,
  RedisFleetListings,
  RedisFleetState,
  RunHistory,
  Suspension,
  WorkspaceHistory,
} from '../../../store/index.js';
import type { InProgressRunView, RunBrief } from '../model.js';

type PolicyRecord = NonNullable<Awaited<ReturnType<PolicyStore['current']>>>;

/**
 * Everything the console reads: Redis only, never the API. A page view costs a few reads of
 * these; none of them writes (holds are read without removing the expired ones).
 */
export interface ConsoleSources {
  history: Pick<RunHistory, 'get' | 'list'>;
  policies: Pick<PolicyStore, 'current' | 'rejected'>;
  suspensions: { all(): Promise<Map<string, Suspension>> };
  state: {
    ledger: Pick<RedisFleetState['ledger'], 'all' | 'intervalsSince'>;
    holds: Pick<RedisFleetState['holds'], 'active' | 'log'>;
    windows: Pick<RedisFleetState['windows'], 'all'>;
  };
  /** The last listing a run made: `latestAt` tells whether it changed without reading it. */
  listings: Pick<RedisFleetListings, 'latestAt' | 'latest'>;
  findings: { open(): Promise<OpenFinding[]> };
  /** What one workspace's timeline is read from: its runs, ledger record and closed pauses. */
  timeline: Pick<WorkspaceHistory, 'runs' | 'ownership' | 'closedPauses'>;
  /**
   * The policy in `text`, read with this process's `${VAR}` values (an unset one is no error:
   * the console shows names and schedules, not secrets); a message when it cannot be read.
   */
  readPolicy(text: string, sha: string): Policy | string;
  /** The audit trail, for `/audit`. */
  audit: Pick<AuditTrail, 'list'>;
  /** A run the history has no summary of yet, from its queue entry; undefined when it is not queued either. */
  inProgress(runId: string): Promise<InProgressRunView | undefined>;
  /**
   * The runs the queue holds now (running, then queued; at most `limit` of each), with the cancel
   * asked for each: what an operator looks for to cancel one.
   */
  underWay(limit: number): Promise<InProgressRunView[]>;
  now?: () => Date;
}

/**
 * What the console changes, each change through src/control (so it is recorded in the audit
 * trail as the CLI's are). Without it the console offers no action, whoever signs in.
 */
export interface ConsoleControl {
  holds: HoldPorts['holds'];
  suspensions: SuspensionPorts['suspensions'];
  cancellations: CancelPorts['cancellations'];
  /** The run's queue entry while it is queued or running: its job. */
  queued: CancelPorts['queued'];
  audit: HoldPorts['audit'];
  /** Runs waiting for approval, and what an approver's decision does (queue it again, or end it). */
  approvals: ApprovalPorts['approvals'];
  queueApproved: ApprovalPorts['queueApproved'];
  recordEnded: ApprovalPorts['recordEnded'];
  clock: ApprovalPorts['clock'];
  /** What queuing a run from the console needs; absent when this process holds no policy key to sign one with. */
  runNow?: ConsoleRunNow | undefined;
}

/** Queuing a run now: the ports `queueManualRun` writes through, and the check `nightshift run` makes. */
export interface ConsoleRunNow extends RunNowPorts {
  /**
   * The policy in force (`text`, stored as `sha`) read for a run of `job` with `parameters`, as
   * `nightshift run` reads its file: with this process's `${VAR}`s, the job's own unset ones an error,
   * the parameters checked by the job's action and located at the job.
   */
  check(text: string, sha: string, job: string, parameters: RunParameters): PolicyCheck;
}

/** A run's brief for lists: its summary without targets and findings. */
export function runBrief(summary: RunSummary): RunBrief {
  return {
    runId: summary.runId,
    job: summary.job,
    action: summary.action,
    trigger: summary.trigger,
    dryRun: summary.dryRun,
    outcome: summary.outcome,
    scheduledAt: summary.scheduledAt,
    startedAt: summary.startedAt,
    finishedAt: summary.finishedAt,
    durationMs: summary.durationMs,
    counts: summary.counts,
    findings: summary.findings.length,
    reason: summary.reason,
    deliveries: summary.deliveries,
    takenOverFrom: summary.takenOverFrom,
  };
}

/**
 * The policy in force, parsed once per sha: a page view reads the current record (and the text
 * only when the sha changed).
 */
export class PolicyInForce {
  readonly #sources: ConsoleSources;
  #cached: { sha: string; policy: Policy | string } | undefined;

  constructor(sources: ConsoleSources) {
    this.#sources = sources;
  }

  async read(): Promise<{ record: PolicyRecord | undefined; policy: Policy | string }> {
    const record = await this.#sources.policies.current();
    if (!record) return { record, policy: 'no scheduler has recorded the policy it runs in this Redis' };
    if (this.#cached?.sha === record.sha) return { record, policy: this.#cached.policy };
    const policy =
      record.text !== undefined
        ? this.#sources.readPolicy(record.text, record.sha)
        : record.stored === undefined
          ? `policy ${record.sha.slice(0, 12)} has expired from Redis`
          : `policy ${record.sha.slice(0, 12)} is not signed with this process's NIGHTSHIFT_POLICY_KEY, so it is not shown`;
    this.#cached = { sha: record.sha, policy };
    return { record, policy };
  }
}
