/**
 * Marks an error as nightshift's by a registered symbol rather than by class identity, so the
 * guard still holds when two copies of this module are loaded (the built CLI beside the sources,
 * or two installed versions).
 */
const BRAND = Symbol.for('nightshift.error');

/**
 * The base of every error nightshift throws. `code` is stable: scripts, alerts and tests may match
 * on it, and docs/errors.md lists each one with what it means. The message is for people and may
 * change; `cause` carries the error underneath, where there is one.
 */
export abstract class NightshiftError extends Error {
  /** Upper snake case (`NS_…` for every code but the webhook ones kept from before), never reused. */
  abstract readonly code: string;

  get [BRAND](): true {
    return true;
  }
}

/** Whether `error` is one of nightshift's errors, and, given `code`, one with that code. */
export function isNightshiftError(error: unknown, code?: string): error is NightshiftError {
  if (typeof error !== 'object' || error === null) return false;
  if ((error as { [BRAND]?: unknown })[BRAND] !== true) return false;
  return code === undefined || (error as NightshiftError).code === code;
}
