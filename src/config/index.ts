export { ConfigError } from './config-error.js';
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
