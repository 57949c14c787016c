export { ConfigError } from './config-error.js';
export {
  CHECKPOINT_TTL_MS,
  CONSOLE_READ_TIMEOUT_MS,
  CONSOLE_REFRESH_MS,
  FLEET_LISTING_REFRESH_MS,
  HOLD_LOG_LENGTH,
  METRICS_QUEUE_TIMEOUT_MS,
  NOTIFY_STATE_TTL_MS,
  PAUSED_INTERVAL_RETENTION_MS,
  POLICY_TTL_MS,
  PROGRESS_LINE_MS,
  PROGRESS_REDRAW_MS,
  PROGRESS_TICK_MS,
  REDIS_READINESS_TIMEOUT_MS,
  RUN_LISTING_TTL_MS,
  RUN_START_TTL_MS,
  SIM_REQUEST_LOG_LIMIT,
  WORKSPACE_HISTORY_MAX_AGE_MS,
} from './defaults.js';
export { processEnvironment } from './environment.js';
export { INSECURE_HTTP_VARIABLE, isLoopback, plainHttpProblem } from './plain-http.js';
export {
  DEFAULT_LOCK_MS,
  DEFAULT_MAX_STALLS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_REDIS_PREFIX,
  DEFAULT_RUN_PART_SIZE,
  DEFAULT_SCHEDULE_LEAD_MS,
  DEFAULT_WORKER_CONCURRENCY,
  EnvironmentSchema,
  MIN_POLICY_KEY_LENGTH,
  type RedisAddress,
  VARIABLES,
} from './schema.js';
export {
  type ApiCredentials,
  apiCredentials,
  configuredRedis,
  consoleTokensText,
  type Environment,
  insecureHttpAllowed,
  loadSettings,
  policyKeys,
  type RedisTls,
  type RedisTopology,
  type Settings,
  serviceRedis,
  uiToken,
  withVariables,
} from './settings.js';
export { SHUTDOWN_LIMIT_MS, type ShutdownBudget, shutdownBudget, WORKER_CLOSE_WAITS } from './shutdown.js';
