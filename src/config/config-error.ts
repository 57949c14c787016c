import { NightshiftError } from '../errors/index.js';

/**
 * A setting from the environment is unusable or missing: the message names each variable, says
 * what is wrong and what was expected, and never repeats a secret's value.
 */
export class ConfigError extends NightshiftError {
  override name = 'ConfigError';
  readonly code = 'NS_CONFIG_INVALID';
}
