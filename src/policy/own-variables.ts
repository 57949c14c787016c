import { VARIABLES } from '../config/index.js';

const SETTINGS = new Set(VARIABLES.map((name) => name.toUpperCase()));

/**
 * Why a policy may not read `name` unless the installation allows it: the variable is one of
 * nightshift's own settings (its credentials among them), in its namespace, or by convention the
 * path of a secret's file. Undefined for any other variable. Case does not matter: on a system
 * whose environment ignores it, `${redis_url}` would read `REDIS_URL`.
 */
export function ownVariableReason(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (SETTINGS.has(upper)) return "is one of nightshift's own settings";
  if (upper.startsWith('NIGHTSHIFT_')) return "is in nightshift's own namespace (NIGHTSHIFT_*)";
  if (upper.endsWith('_FILE')) return "names a secret's file (*_FILE)";
  return undefined;
}

/** The message for a `${NAME}` of nightshift's own that the installation has not allowed. */
export function ownVariableMessage(name: string, reason: string): string {
  return `environment variable ${name} ${reason}, which a policy may not read; to let policies read it, add it to NIGHTSHIFT_POLICY_ENV_ALLOW where nightshift runs`;
}
