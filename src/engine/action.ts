import type { z } from 'zod';
import type { ApiClient } from '../api/index.js';
import type { Logger } from '../log/logger.js';
import type { ActionSpec, PolicyWindow } from '../policy/index.js';
import type { ProgressRecord } from './checkpoint.js';
import type { FleetView } from './fleet.js';
import type { Hold, RunOwnership } from './ownership.js';
import type { StateWait } from './retry.js';
import type { Finding } from './summary.js';
import type { SelectedWorkgroup, SelectedWorkspace } from './targets.js';
import type { WindowStateStore } from './window-state.js';

/** How a target is named in a run's records. `key` is stable across deliveries of the run. */
export interface TargetRef {
  key: string;
  workgroupId?: string;
  workgroupName?: string;
  workspaceId?: string;
  workspaceName?: string;
}

/** What one target's step came to. Failures are thrown (an ApiError says whether to retry). */
export type StepResult =
  | { outcome: 'succeeded'; reason?: string; detail?: Record<string, unknown> }
  | { outcome: 'skipped'; reason: string; detail?: Record<string, unknown> }
  | { outcome: 'planned'; reason: string; detail?: Record<string, unknown> };

export interface StepContext {
  /**
   * 1 on the first try; a step on a later try must re-read state before acting. Throttled tries
   * count here (an earlier call of the step may have gone through), not against `retry.attempts`.
   */
  attempt: number;
  signal: AbortSignal;
  log: Logger;
  /** What earlier attempts of this target did, kept with the run's checkpoint: it survives a takeover. */
  progressRecord: ProgressRecord;
}

/**
 * Everything an action touches the world through. The engine owns concurrency, per-target
 * retries, checkpoints and request-ID bookkeeping; the action owns what a step does.
 */
export interface ActionContext {
  api: ApiClient;
  log: Logger;
  signal: AbortSignal;
  dryRun: boolean;
  /** The run's id, as in its summary and log lines (e.g. to label a secret delivered to a sink). */
  runId: string;
  /** The job's name and concurrency; for a window's reconciliation, the window too. */
  job: { name: string; concurrency: number; window?: PolicyWindow | undefined };
  /** The fleet, listed when the run started; shared polls keep it fresh while steps wait. */
  fleet: FleetView;
  /** The job's target, resolved when the run started (scope `workspace`). */
  workspaces: readonly SelectedWorkspace[];
  /** The job's target, resolved when the run started (scope `workgroup`). */
  workgroups: readonly SelectedWorkgroup[];
  /**
   * The ownership ledger, bound to this run (its job or window is the owner): given by workers, and
   * by `run --inline` and `plan` when REDIS_URL is set; absent otherwise. Read-only in a dry run.
   */
  ownership?: RunOwnership;
  /** The holds in force when the run started (workspace actions only); absent when unknown (no Redis). */
  holds?: readonly Hold[];
  /** Windows' reconciliation state; absent without Redis. */
  windowStates?: WindowStateStore;
  /** The run's clock: what "now" is for decisions that depend on the time (windows, holds, durations). */
  now(): Date;
  /**
   * Waits for a state of one thing other than a workspace (a workspace's: `fleet.waitFor`), with
   * the engine's rule for failed looks (retry.ts) under the job's retry policy and the run's clock.
   */
  waitForState<T>(wait: Omit<StateWait<T>, 'policy' | 'clock'>): Promise<T>;
  /** Runs `step` for each item with the job's concurrency, retrying each on its own. */
  forEachTarget<T>(
    items: readonly T[],
    ref: (item: T) => TargetRef,
    step: (item: T, context: StepContext) => Promise<StepResult>,
  ): Promise<void>;
  finding(finding: Finding): void;
  /**
   * Every finding of the run so far: the run's own and those of every finished target, including
   * targets finished by an earlier delivery of the run (kept with their checkpoints), so a verdict
   * on findings (an audit's `failOn`) sees all of them after a takeover.
   */
  findings(): readonly Finding[];
  evidence(record: Record<string, unknown>): void;
  /**
   * Makes the run end at least `outcome` (partial, or failed) with `reason`, whatever its targets
   * came to: e.g. a resume that leaves workspaces it owns stopped, or an audit whose findings
   * reach its `failOn` severity. The worst outcome wins; every reason is kept.
   */
  markRun(outcome: RunVerdict, reason: string): void;
}

/** What an action may make of a whole run beyond its targets' outcomes. */
export type RunVerdict = 'partial' | 'failed';

/** An action as the engine runs it: its policy-facing spec plus `plan` (read-only) and `run`. */
export interface Action<Params extends z.ZodType = z.ZodType> extends ActionSpec<Params> {
  /** What `run` would do now, using read-only calls only. */
  plan(ctx: ActionContext, params: z.output<Params>): Promise<void>;
  run(ctx: ActionContext, params: z.output<Params>): Promise<void>;
}

export function workspaceRef(ws: SelectedWorkspace): TargetRef {
  return {
    key: `${ws.workgroupId}/${ws.workspaceId}`,
    workgroupId: ws.workgroupId,
    workgroupName: ws.workgroupName,
    workspaceId: ws.workspaceId,
    workspaceName: ws.workspaceName,
  };
}

export function workgroupRef(wg: SelectedWorkgroup): TargetRef {
  return { key: wg.workgroupId, workgroupId: wg.workgroupId, workgroupName: wg.workgroupName };
}
