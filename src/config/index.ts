export { ConfigError } from './config-error.js';
export { processEnvironment } from './environment.js';
export {
  DEFAULT_LOCK_MS,
  DEFAULT_REDIS_PREFIX,
  DEFAULT_RUN_PART_SIZE,
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
  loadSettings,
  policyKeys,
  type RedisTls,
  type RedisTopology,
  type Settings,
  serviceRedis,
  uiToken,
  withVariables,
} from './settings.js';
