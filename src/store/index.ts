export { Approvals, type DecisionRefusal } from './approvals.js';
export {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditEntry,
  AuditEntrySchema,
  type AuditRequest,
  AuditTrail,
  type ListAuditOptions,
} from './audit.js';
export { RunCancellations, readCancellation } from './cancellations.js';
export { RedisCheckpointStore } from './checkpoint.js';
export { FindingsLedger, type OpenFinding, OpenFindingSchema } from './findings.js';
export { RedisFleetListings } from './fleet-listing.js';
export { fleetStateStores, type RedisFleetState } from './fleet-state.js';
export { type LastRun, RunHistory } from './history.js';
export type { Holds } from './holds.js';
export { parseJson } from './json.js';
export { LastTicks } from './last-ticks.js';
export type { RedisOwnershipLedger } from './ledger.js';
export {
  isListening,
  type LocalRedis,
  RedisPortTakenError,
  RedisServerMissingError,
  startLocalRedis,
} from './local-server.js';
export { loadScripts } from './lua.js';
export { NotifyStates, type NotifyStatesOptions } from './notify-states.js';
export { OverdueEpisodes } from './overdue-episodes.js';
export {
  PolicyKeyring,
  PolicyRefusedError,
  type PolicySignatures,
  type PolicyVerdict,
  RunParametersRefusedError,
} from './policy-signing.js';
export {
  type CurrentPolicy,
  type ParameterBinding,
  PolicyStore,
  policySha,
  type RejectedEdit,
  RejectedEditSchema,
  type StoredPolicy,
} from './policy-store.js';
export { LocalRateLimiter, RedisRateLimiter } from './rate-limiter.js';
export {
  connectRedis,
  createRedis,
  describeRedis,
  isRedisUnreachable,
  pingRedis,
  type RedisConnection,
  reconnectDelay,
  redisRefusal,
  safeRedisUrl,
} from './redis.js';
export { ExecutionLease, RunLeases } from './run-lease.js';
export { RunListings } from './run-listings.js';
export { RunLock } from './run-lock.js';
export { type RunStart, RunStarts } from './run-starts.js';
export {
  describeSuspension,
  type SuspendRequest,
  type Suspension,
  Suspensions,
  suspendsAt,
} from './suspensions.js';
export { RedisWindowStates } from './window-state.js';
export {
  RUNS_PER_WORKSPACE,
  WorkspaceHistory,
  type WorkspaceRun,
} from './workspace-history.js';
