import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../api/index.js';
import { NightshiftError } from '../errors/index.js';
import type { Logger } from '../log/logger.js';

/** How a target is retried: the job's `retry` setting, durations in milliseconds. */
export interface RetryPolicy {
  /** Total attempts, the first included. */
  attempts: number;
  /** Base delay before the second attempt. */
  backoff: number;
  strategy: 'exponential' | 'fixed';
}

/** No single wait grows past this, however many attempts a policy allows. */
export const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * The wait before attempt `attempt + 1`, after `attempt` failed (1-based). Exponential backoff
 * with full jitter in its upper half, so a fleet of targets that failed together does not retry
 * together; a server's `Retry-After` is a floor, never shortened by jitter.
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const base = policy.strategy === 'fixed' ? policy.backoff : policy.backoff * 2 ** Math.max(0, attempt - 1);
  const capped = Math.min(base, MAX_BACKOFF_MS);
  const jittered = capped / 2 + random() * (capped / 2);
  return Math.round(Math.max(jittered, retryAfterMs ?? 0));
}

/**
 * Whether the API turned a call away for going too fast (HTTP 429, or an error of Type
 * `Quota-Exceed` whatever its status): the call was refused, not failed, and comes back later.
 */
export function isThrottle(error: ApiError): boolean {
  return error.retryable && (error.status === 429 || error.type === 'Quota-Exceed');
}

/**
 * The wait after the `throttled`-th throttle (1-based) of one operation: the server's positive
 * `Retry-After` as given; without one (or with 0) the policy's backoff, growing with each throttle
 * as it would with failed attempts, so a server that never says when is not hammered.
 */
export function throttleDelay(
  policy: RetryPolicy,
  throttled: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  return retryAfterMs !== undefined && retryAfterMs > 0
    ? retryAfterMs
    : retryDelay(policy, throttled, undefined, random);
}

/** The last error of a retried operation, with how many attempts (and throttled tries) were spent on it. */
export class AttemptsFailedError extends NightshiftError {
  override name = 'AttemptsFailedError';
  readonly code = 'NS_ATTEMPTS_FAILED';
  constructor(
    readonly attempts: number,
    override readonly cause: unknown,
    readonly throttled = 0,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** One wait of `withRetries`, before the next try. */
export interface RetryWait {
  /** The try that failed, 1-based, throttled tries included. */
  attempt: number;
  /** Attempts counted against the policy so far. */
  attempts: number;
  /** Tries throttled so far, this one included when it was throttled. */
  throttled: number;
  /** True when the try was throttled: the wait does not count as an attempt. */
  throttle: boolean;
  delayMs: number;
  error: ApiError;
}

/** What a retried operation came to: its value, the attempts it counted and the tries the API throttled. */
export interface RetryResult<T> {
  value: T;
  attempts: number;
  throttled: number;
}

/**
 * Calls `fn` until it succeeds, retrying only what an ApiError marks retryable. A throttled try
 * (see `isThrottle`) waits as the server says and is tried again without counting as an attempt;
 * every other retryable failure counts, up to the policy's attempts. This is the one retry loop of
 * the engine: the client never retries, so a 5-attempt policy means at most 5 calls that failed
 * for any reason but throttling. Only `signal` bounds a throttled operation (a run's `timeout`):
 * its abort ends the loop at once with the signal's reason.
 *
 * `fn` is given the try number (1-based, throttled tries included): a step on a later try must
 * re-read what an earlier one may have changed, throttled or not, since a throttle may have hit
 * a later call of a step whose earlier calls went through.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  fn: (attempt: number) => Promise<T>,
  onWait?: (wait: RetryWait) => void,
): Promise<RetryResult<T>> {
  let attempts = 0;
  let throttled = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const value = await fn(attempt);
      return { value, attempts: attempts + 1, throttled };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const throttle = error instanceof ApiError && isThrottle(error);
      if (throttle) throttled++;
      else attempts++;
      if (!(error instanceof ApiError && error.retryable) || (!throttle && attempts >= policy.attempts)) {
        throw new AttemptsFailedError(attempts, error, throttled);
      }
      const delayMs = throttle
        ? throttleDelay(policy, throttled, error.retryAfterMs)
        : retryDelay(policy, attempts, error.retryAfterMs);
      onWait?.({ attempt, attempts, throttled, throttle, delayMs, error });
      try {
        await sleep(delayMs, undefined, { signal });
      } catch (abort) {
        signal.throwIfAborted(); // the signal's reason, not the timer's generic AbortError
        throw abort;
      }
    }
  }
}

/** Logs each wait of `withRetries`: a failed attempt at warn as `failed`, a throttle at info. */
export function logWaits(log: Logger, failed: string): (wait: RetryWait) => void {
  return ({ attempt, throttled, throttle, delayMs, error }) => {
    if (throttle)
      log.info({ attempt, throttled, delayMs, err: error.toJSON() }, 'throttled; waiting (not counted)');
    else log.warn({ attempt, delayMs, err: error.toJSON() }, failed);
  };
}
