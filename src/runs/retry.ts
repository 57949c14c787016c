import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../api/index.js';

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

/** The last error of a retried operation, with how many attempts were spent on it. */
export class AttemptsFailedError extends Error {
  override name = 'AttemptsFailedError';
  constructor(
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * Calls `fn` until it succeeds, retrying only what an ApiError marks retryable, up to the
 * policy's attempts. This is the one retry loop of the engine: the client never retries, so a
 * 5-attempt policy means at most 5 calls. An abort of `signal` ends it at once with the
 * signal's reason.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  fn: (attempt: number) => Promise<T>,
  onRetry?: (attempt: number, delayMs: number, error: ApiError) => void,
): Promise<{ value: T; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await fn(attempt), attempts: attempt };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (!(error instanceof ApiError && error.retryable) || attempt >= policy.attempts) {
        throw new AttemptsFailedError(attempt, error);
      }
      const delayMs = retryDelay(policy, attempt, error.retryAfterMs);
      onRetry?.(attempt, delayMs, error);
      await sleep(delayMs, undefined, { signal });
    }
  }
}
