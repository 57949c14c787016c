import type { Dispatcher } from 'undici';
import type { BodyPrefix } from './body.js';
import type { Deadline } from './deadlines.js';

/** What came back of one request: its status, its headers, and its body as far as it was read. */
export interface Exchanged {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  read: BodyPrefix;
}

/**
 * One request through `dispatcher`, its answer read into memory: at most `limitFor(status)` bytes
 * of body, the connection closed on the rest. The deadline aborting cuts the request off, wherever
 * it is, and rejects with its reason.
 *
 * Undici's handler API, not its `request()`: `request()` hands the body over as a stream, an
 * AsyncResource and an abort listener of its own per call, which on a fleet pause (10,000 calls
 * of a few hundred bytes) cost about a quarter of what each call allocated, and most of that
 * outlived the call into the old generation; this reads the same bytes with none of it.
 */
export function exchange(
  dispatcher: Dispatcher,
  request: Dispatcher.DispatchOptions,
  deadline: Pick<Deadline, 'signal' | 'onAbort'>,
  limitFor: (status: number) => number,
): Promise<Exchanged> {
  const { signal } = deadline;
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let answer: Omit<Exchanged, 'read'> | undefined;
    let limit = 0;
    let length = 0;
    let chunks: Buffer[] = [];
    let settled = false;
    let stopListening: (() => void) | undefined;
    const read = (truncated: boolean): BodyPrefix => {
      const text =
        chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
      chunks = [];
      return { text, truncated };
    };
    const settle = (outcome: { read: BodyPrefix } | { error: unknown }) => {
      if (settled) return;
      settled = true;
      stopListening?.();
      if ('error' in outcome) reject(outcome.error);
      else resolve({ ...(answer as Omit<Exchanged, 'read'>), read: outcome.read });
    };
    // a request still waiting for a connection has no controller yet: its caller hears at once,
    // and the request is dropped once it starts (onRequestStart)
    stopListening = deadline.onAbort((reason) => {
      controller?.abort(reason as Error);
      settle({ error: reason });
    });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (signal.aborted) started.abort(signal.reason as Error);
      },
      onResponseStart(_controller, statusCode, headers) {
        if (statusCode < 200) return;
        answer = { status: statusCode, headers };
        limit = limitFor(statusCode);
      },
      onResponseData(started, chunk) {
        if (settled) return;
        if (length + chunk.length <= limit) {
          chunks.push(chunk);
          length += chunk.length;
          return;
        }
        chunks.push(chunk.subarray(0, limit - length));
        settle({ read: read(true) });
        started.abort(new Error(`the answer was cut after ${limit} bytes`));
      },
      onResponseEnd() {
        settle(
          answer ? { read: read(false) } : { error: new Error('the answer ended before its status line') },
        );
      },
      onResponseError(_controller, error) {
        settle({ error });
      },
    };
    try {
      dispatcher.dispatch(request, handler);
    } catch (error) {
      settle({ error });
    }
  });
}
