import { AsyncLocalStorage } from 'node:async_hooks';
import type { ApiCallRecord } from '../api/index.js';
import type { Logger } from '../log/index.js';
import type { RunSlots } from './run-slots.js';

/** Who an API call was made for: a run as a whole, or one target's attempt. */
export interface CallScope {
  log: Logger;
  requestIds: string[];
  attempt?: number;
  /** A pipelined target's call slots (`gatedApi`). */
  calls?: TargetCalls;
}

/**
 * How a pipelined target takes the run's call slots: one for each API call in flight (`rank`: its
 * part's index). A call that failed in a way a retry may mend keeps its slot in `held` until the
 * target calls again or ends, so a target waiting out a throttle or a backoff still counts against
 * `concurrency`, as a target that is not pipelined does.
 */
export interface TargetCalls {
  slots: RunSlots;
  rank: number | undefined;
  held?: (() => void) | undefined;
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
