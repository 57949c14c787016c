import { readFileSync } from 'node:fs';
import { NightshiftError } from '../errors/index.js';

/** A required setting is missing or unusable; the message names the variable, never its value. */
export class ConfigError extends NightshiftError {
  override name = 'ConfigError';
  readonly code = 'NS_CONFIG_INVALID';
}

export interface ApiSettings {
  baseUrl: string;
  apiKey: string;
  bearerToken: string | undefined;
}

/**
 * The API settings from the environment: `NIGHTSHIFT_API_URL`, `NIGHTSHIFT_API_KEY` or
 * `NIGHTSHIFT_API_KEY_FILE` (for secrets mounted as files; not both) and the optional
 * `NIGHTSHIFT_BEARER_TOKEN`. Every problem is reported at once, before anything is scheduled.
 */
export function apiSettingsFromEnv(env: NodeJS.ProcessEnv): ApiSettings {
  const problems: string[] = [];
  const baseUrl = env.NIGHTSHIFT_API_URL?.trim();
  if (!baseUrl) problems.push('NIGHTSHIFT_API_URL is not set (the base URL of the management API)');
  else if (!/^https?:\/\//.test(baseUrl))
    problems.push('NIGHTSHIFT_API_URL must start with http:// or https://');

  let apiKey = env.NIGHTSHIFT_API_KEY?.trim();
  if (apiKey && env.NIGHTSHIFT_API_KEY_FILE?.trim()) {
    // which one wins would be a guess, and the wrong guess fails every call with a key nobody looked at
    problems.push('NIGHTSHIFT_API_KEY and NIGHTSHIFT_API_KEY_FILE are both set; set only one of them');
  } else if (!apiKey && env.NIGHTSHIFT_API_KEY_FILE) {
    try {
      apiKey = readFileSync(env.NIGHTSHIFT_API_KEY_FILE, 'utf8').trim();
      if (!apiKey) problems.push('NIGHTSHIFT_API_KEY_FILE names an empty file');
    } catch (error) {
      problems.push(
        `NIGHTSHIFT_API_KEY_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  } else if (!apiKey) {
    problems.push('NIGHTSHIFT_API_KEY (or NIGHTSHIFT_API_KEY_FILE) is not set');
  }
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  return {
    baseUrl: baseUrl as string,
    apiKey: apiKey as string,
    bearerToken: env.NIGHTSHIFT_BEARER_TOKEN?.trim() || undefined,
  };
}
