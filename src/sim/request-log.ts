import type { OperationName } from './catalog.js';
import type { FaultOutcome } from './faults.js';
import { isoTime } from './iso-time.js';

/** Which credential header a request carried; the value itself is never recorded. */
export type AuthPresence = 'none' | 'x-api-key' | 'authorization' | 'both';

export interface RequestLogEntry {
  /** Position in the log, from 1, never reused; `GET /_sim/requests?since=N` returns entries after N. */
  seq: number;
  time: string;
  method: string;
  /** Path without the query string. */
  path: string;
  /** Null for a path that matches no operation. */
  operation: OperationName | null;
  /** Null when the connection was dropped or left hanging. */
  status: number | null;
  requestId: string;
  auth: AuthPresence;
  /** The injected fault, if any: `latency` when the request was only delayed. */
  fault: Exclude<FaultOutcome, 'pass'> | 'latency' | null;
  delayMs: number;
}

export type RequestLogInput = Omit<RequestLogEntry, 'seq' | 'time'>;

export function authPresence(headers: Record<string, string | string[] | undefined>): AuthPresence {
  const apiKey = headers['x-api-key'] !== undefined;
  const bearer = headers.authorization !== undefined;
  if (apiKey && bearer) return 'both';
  if (apiKey) return 'x-api-key';
  return bearer ? 'authorization' : 'none';
}

/**
 * The last `limit` requests, in a ring so a long benchmark costs no more memory than a short
 * one. `seq` keeps counting across `clear()` so a poller's `since` stays meaningful.
 */
export class RequestLog {
  #entries: (RequestLogInput & { seq: number; atMs: number })[] = [];
  #oldest = 0;
  #seq = 0;

  constructor(readonly limit: number) {}

  add(entry: RequestLogInput, atMs: number): void {
    const record = { ...entry, seq: ++this.#seq, atMs };
    if (this.#entries.length < this.limit) {
      this.#entries.push(record);
    } else {
      this.#entries[this.#oldest] = record;
      this.#oldest = (this.#oldest + 1) % this.limit;
    }
  }

  /** Entries with `seq` above `since`, oldest first. */
  since(since = 0): RequestLogEntry[] {
    const ordered = [...this.#entries.slice(this.#oldest), ...this.#entries.slice(0, this.#oldest)];
    return ordered
      .filter((entry) => entry.seq > since)
      .map(({ atMs, seq, ...rest }) => ({ seq, time: isoTime(atMs), ...rest }));
  }

  clear(): void {
    this.#entries = [];
    this.#oldest = 0;
  }
}
