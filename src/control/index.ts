export {
  type ApprovalPorts,
  approveRun,
  type DecisionResult,
  NotAnApproverError,
  rejectRun,
  UnknownApprovalError,
} from './approvals.js';
export {
  type CancelPorts,
  type CancelResult,
  RunAwaitingApprovalError,
  requestCancel,
  UnknownRunError,
} from './cancel.js';
export { type HoldPorts, placeHold, releaseHold } from './holds.js';
export { type AuditLog, type Origin, recordChange } from './origin.js';
export { type ManualRun, queueManualRun, type RunNowPorts, type RunNowRequest } from './run-now.js';
export { type SuspensionPorts, suspendJob, unsuspendJob } from './suspensions.js';
