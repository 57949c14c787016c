export type { ConsoleSources } from './console/data/sources.js';
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
  presentedToken,
  type Readiness,
  startOpsServer,
  UI_PATH,
} from './server.js';
