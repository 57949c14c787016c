export { ConfigError } from './config-error.js';
export { processEnvironment } from './environment.js';
export { DEFAULT_LOCK_MS, DEFAULT_REDIS_PREFIX, EnvironmentSchema, VARIABLES } from './schema.js';
export {
  type ApiCredentials,
  apiCredentials,
  type Environment,
  loadSettings,
  type Settings,
  serviceRedisUrl,
  uiToken,
  withVariables,
} from './settings.js';
