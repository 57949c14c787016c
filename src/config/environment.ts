import type { Environment } from './settings.js';

/**
 * The process's environment: the one place it is read. The CLI loads Settings from it once and
 * passes them down; nothing else looks at process.env.
 */
export function processEnvironment(): Environment {
  return process.env;
}
