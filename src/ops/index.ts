export {
  type Access,
  AccessGate,
  type AccessOptions,
  presentedToken,
} from './access/gate.js';
export {
  newConsoleToken,
  type Principal,
  PrincipalDirectory,
  readPrincipals,
  TokensFileError,
  tokenHash,
} from './access/principals.js';
export { CONSOLE_ACTIONS, type ConsoleAction, may, ROLES, type Role } from './access/roles.js';
export { SessionStore } from './access/sessions.js';
export type { ConsoleControl, ConsoleRunNow, ConsoleSources } from './console/data/sources.js';
export type * from './console/model.js';
export type { ConsoleOptions } from './console/routes.js';
export { fleetSnapshots } from './fleet-metrics.js';
export {
  apiCallStatus,
  type LastRunRecord,
  type LastRunSource,
  Metrics,
  type MetricsOptions,
  QUEUE_STATES,
  type QueueDepthSource,
} from './metrics.js';
export {
  assertSafeBind,
  DEFAULT_OPS_HOST,
  DEFAULT_OPS_PORT,
  isLoopback,
  type OpsServer,
  OpsServerError,
  type OpsServerErrorCode,
  type OpsServerOptions,
  type Readiness,
  startOpsServer,
  UI_PATH,
} from './server.js';
