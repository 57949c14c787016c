/** What actions need of the policy layer: jobs/ import the engine, never the policy. */
export { createActionCatalog, DurationSchema, WINDOW_ACTION } from '../policy/index.js';
export { type Clock, systemClock } from '../time/index.js';
export { abortable } from './abortable.js';
export {
  type Action,
  type ActionContext,
  type ActionFiles,
  type ActionIo,
  type PlanContext,
  type ReadOnlyApi,
  type ReadOnlyDone,
  type RunVerdict,
  readOnlyApi,
  readOnlyVerbs,
  SecretSinkError,
  type SecretSinkIo,
  type SinkCommand,
  type SplitPlan,
  type StepContext,
  type StepResult,
  sharedOut,
  type TargetRef,
  workgroupRef,
  workspaceRef,
} from './action.js';
export * from './approval.js';
export { callScope, recordApiCall } from './call-scope.js';
export {
  type Cancellation,
  CancellationSchema,
  describeCancellation,
  RunCancelledError,
} from './cancel.js';
export { type CheckpointStore, MemoryCheckpointStore, type ProgressRecord } from './checkpoint.js';
export { executePart, executeRun } from './execute-run.js';
export { describeStopAfter, FailureBudget, RunHaltedError } from './failure-budget.js';
export { FleetView, WaitTimeoutError } from './fleet.js';
export {
  type FleetListing,
  FleetListingSchema,
  type FleetListingSink,
  sliceListing,
  trimListing,
} from './fleet-listing.js';
export * from './holds.js';
export { type IdempotentOutcome, type IdempotentStep, idempotentStep } from './idempotent-step.js';
export { type ExecutionLease, LeaseExpiredError, leasedApi } from './lease.js';
export { MemoryOwnershipLedger } from './memory-ledger.js';
export { type NodeActionIoOptions, nodeActionIo } from './node-action-io.js';
export * from './ownership.js';
export {
  AttemptsFailedError,
  FailedLooks,
  type RetryPolicy,
  retryDelay,
  type StateWait,
  waitForState,
  willRetry,
  withRetries,
} from './retry.js';
export {
  type FailedPart,
  type PartsRequest,
  partRefusal,
  type RunPart,
  type RunSplitter,
  splitTargets,
} from './run-parts.js';
export type { FleetStateStores, PartRequest, RunDependencies, RunRequest } from './run-request.js';
export { type RunGates, RunSlots, RunSlotsByRun } from './run-slots.js';
export {
  apportion,
  type OwnerSavings,
  type PausedStretch,
  type PausedTime,
  pausedTime,
  type SavingsReport,
  savingsBy,
  savingsReport,
  savingsTotal,
} from './savings.js';
export {
  LedgerUnansweredError,
  type ListingAhead,
  listAhead,
  type SequencedListing,
  type SequencedListings,
  type SharedListings,
  sharedListings,
} from './shared-listing.js';
export {
  isNightshiftVariable,
  SINK_BASE_ENVIRONMENT,
  type SinkCommandAllowlist,
  sinkProgramRefusal,
} from './sink-commands.js';
export { STRANDED_RULE, strandedFinding, strandedSubject } from './stranded.js';
export * from './summary.js';
export * from './targets.js';
export { TickGate, type TickGateOptions } from './tick-gate.js';
export { turns } from './turns.js';
export {
  decideWindow,
  decideWindows,
  type FleetWindowsInput,
  type WindowDecision,
  type WorkspaceDecision,
} from './window-decision.js';
export * from './window-report.js';
export * from './window-state.js';
export { TIMED_OUT, within } from './within.js';
export { STATUS } from './workspace-status.js';
