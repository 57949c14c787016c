import { ApiError } from '../api/index.js';
import { NightshiftError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { type Clock, systemClock } from '../time/index.js';

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

/**
 * Whether the engine tries a step again after it failed with `error`: an API error the API marks
 * transient (throttles included), while the run goes on. Everything else fails the target at once.
 */
export function willRetry(error: unknown, signal: AbortSignal): boolean {
  return !signal.aborted && error instanceof ApiError && error.retryable;
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
 * its abort ends the loop at once with the signal's reason. An AttemptsFailedError out of `fn` (a
 * wait for a state whose looks spent the policy, see `FailedLooks`) is final: its attempts were
 * retried already, and trying `fn` again would multiply them.
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
  clock: Clock = systemClock,
): Promise<RetryResult<T>> {
  let attempts = 0;
  let throttled = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const value = await fn(attempt);
      return { value, attempts: attempts + 1, throttled };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof AttemptsFailedError)
        throw new AttemptsFailedError(attempts + 1, error.cause, throttled);
      const throttle = error instanceof ApiError && isThrottle(error);
      if (throttle) throttled++;
      else attempts++;
      if (
        !(error instanceof ApiError) ||
        !willRetry(error, signal) ||
        (!throttle && attempts >= policy.attempts)
      ) {
        throw new AttemptsFailedError(attempts, error, throttled);
      }
      const delayMs = throttle
        ? throttleDelay(policy, throttled, error.retryAfterMs)
        : retryDelay(policy, attempts, error.retryAfterMs);
      onWait?.({ attempt, attempts, throttled, throttle, delayMs, error });
      await clock.sleep(delayMs, signal);
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

/**
 * The retry rule of a wait for a state (a workspace Active again, a provider's upgrade over): a
 * look that fails permanently (an error that is not an ApiError, or one the API marks permanent:
 * Unauthorized, Forbidden, Not-Found, Bad-Request, API-Disabled) ends the wait at once with that
 * error; a transient one is looked past, the next look waiting the policy's backoff (at least the
 * poll interval and the server's Retry-After); once the policy's attempts failed in a row the wait
 * ends with an AttemptsFailedError. A throttled look waits as the server says and is not counted.
 * A good look starts the count again: the wait's own bound is its deadline.
 */
export class FailedLooks {
  readonly #policy: RetryPolicy;
  readonly #intervalMs: number;
  #failed = 0;
  #throttled = 0;

  constructor(policy: RetryPolicy, intervalMs: number) {
    this.#policy = policy;
    this.#intervalMs = intervalMs;
  }

  /** After a look that worked. */
  succeeded(): void {
    this.#failed = 0;
    this.#throttled = 0;
  }

  /** After a look that failed: how long until the next one; throws when the wait must end. */
  failed(error: unknown): number {
    if (!(error instanceof ApiError) || !error.retryable) throw error;
    if (isThrottle(error)) {
      this.#throttled++;
      return Math.max(this.#intervalMs, throttleDelay(this.#policy, this.#throttled, error.retryAfterMs));
    }
    this.#failed++;
    if (this.#failed >= this.#policy.attempts)
      throw new AttemptsFailedError(this.#failed, error, this.#throttled);
    return Math.max(this.#intervalMs, retryDelay(this.#policy, this.#failed, error.retryAfterMs));
  }
}

/** What `waitForState` is told about the thing it waits for. */
export interface StateWait<T> {
  policy: RetryPolicy;
  clock: Clock;
  signal: AbortSignal;
  intervalMs: number;
  timeoutMs: number;
  /** Reads the current state (one API call). */
  look: (signal: AbortSignal) => Promise<T>;
  /** True once the state is the one waited for. */
  reached: (state: T) => boolean;
  /** The error a wait that ran out ends with, given the last state seen (if any look worked). */
  timedOut: (last: T | undefined) => Error;
  /** Told of each failed look the wait goes on after. */
  onFailedLook?: (error: unknown, delayMs: number) => void;
}

/**
 * Looks every `intervalMs` (the first look after one interval) until `reached` holds, the deadline
 * passes (`timedOut`), or a failed look ends the wait (see FailedLooks). The one wait for a state
 * of a single thing; a run's waits for workspaces share one poll (FleetView) under the same rule.
 */
export async function waitForState<T>(wait: StateWait<T>): Promise<T> {
  const deadline = wait.clock.monotonic() + wait.timeoutMs;
  const looks = new FailedLooks(wait.policy, wait.intervalMs);
  let last: T | undefined;
  let delayMs = wait.intervalMs;
  for (;;) {
    await wait.clock.sleep(delayMs, wait.signal);
    delayMs = wait.intervalMs;
    try {
      last = await wait.look(wait.signal);
      looks.succeeded();
      if (wait.reached(last)) return last;
    } catch (error) {
      wait.signal.throwIfAborted();
      delayMs = looks.failed(error);
      wait.onFailedLook?.(error, delayMs);
    }
    if (wait.clock.monotonic() >= deadline) throw wait.timedOut(last);
  }
}
