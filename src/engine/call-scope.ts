import { AsyncLocalStorage } from 'node:async_hooks';
import type { ApiCallRecord } from '../api/index.js';
import type { Logger } from '../log/index.js';
import type { RunSlots } from './run-slots.js';

/** Who an API call was made for: a run as a whole, or one target's attempt. */
export interface CallScope {
  log: Logger;
  requestIds: string[];
  attempt?: number;
  /**
   * A pipelined target's: each of its API calls takes one of these slots (`rank`: its part's
   * index) for as long as the call is in flight (`gatedApi`).
   */
  calls?: { slots: RunSlots; rank: number | undefined };
}

/**
 * Carries the current run or target through every await, so each API call's request ID lands
 * in the record of the target it was made for, and its log line carries that target's context.
 */
export const callScope = new AsyncLocalStorage<CallScope>();

/** The `onCall` of the client a worker runs actions with: one log line and one request ID per call. */
export function recordApiCall(fallback: Logger): (call: ApiCallRecord) => void {
  return (call) => {
    const scope = callScope.getStore();
    if (call.requestId) scope?.requestIds.push(call.requestId);
    const log = scope?.log ?? fallback;
    const fields = {
      operation: call.operation,
      status: call.status,
      requestId: call.requestId,
      durationMs: Math.round(call.durationMs),
      attempt: scope?.attempt,
    };
    if (call.error) log.warn({ ...fields, err: call.error.toJSON() }, 'api call failed');
    else log.info(fields, 'api call');
  };
}
