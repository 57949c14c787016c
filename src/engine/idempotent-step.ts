import { ApiError } from '../api/index.js';

/** A mutation that may find its change made already: by someone else, or by an earlier attempt. */
export interface IdempotentStep<Result, Found> {
  /** The mutating call. */
  attempt(): Promise<Result>;
  /**
   * Re-reads the state after the API refused `attempt` for good: what shows the change made
   * already (or under way), or `undefined`/`false` when it is not. What this throws (a throttle
   * on the re-read, say) is thrown as it is, for the engine to wait out or retry.
   */
  isDone(refusal: ApiError): Promise<Found | false | undefined>;
  /** What to throw when the change is not there; default the refusal itself. */
  notDone?(refusal: ApiError): Error;
}

export type IdempotentOutcome<Result, Found> =
  | { already: false; result: Result }
  | { already: true; found: Found };

/**
 * Runs a mutation so that a refusal of an "already there" request is success, not failure: when
 * the API refuses it for good (a non-retryable ApiError), the state is re-read and the step ends
 * `already` if it shows the change. A transient error is thrown as it is: the engine retries it,
 * and the next attempt re-reads anyway.
 */
export async function idempotentStep<Result, Found>(
  step: IdempotentStep<Result, Found>,
): Promise<IdempotentOutcome<Result, Found>> {
  try {
    return { already: false, result: await step.attempt() };
  } catch (error) {
    if (!(error instanceof ApiError) || error.retryable) throw error;
    const found = await step.isDone(error);
    if (found !== undefined && found !== false) return { already: true, found };
    throw step.notDone ? step.notDone(error) : error;
  }
}
