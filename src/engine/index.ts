export {
  type Action,
  type ActionContext,
  type RunVerdict,
  type StepContext,
  type StepResult,
  type TargetRef,
  workgroupRef,
  workspaceRef,
} from './action.js';
export { callScope, recordApiCall } from './call-scope.js';
export { type CheckpointStore, MemoryCheckpointStore, type ProgressRecord } from './checkpoint.js';
export { type Clock, systemClock } from './clock.js';
export { executeRun, type FleetStateStores, type RunDependencies, type RunRequest } from './execute-run.js';
export { FleetView, WaitTimeoutError } from './fleet.js';
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
export * from './summary.js';
export {
  checkTargetLimit,
  countWorkgroups,
  countWorkspaces,
  type SelectedWorkgroup,
  type SelectedWorkspace,
  selectTargets,
  selectWorkgroups,
  type TargetLimitCheck,
} from './targets.js';
export * from './window-state.js';
