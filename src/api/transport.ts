import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { type BodyPrefix, withoutCutTail } from './body.js';
import { Deadlines } from './deadlines.js';
import { ApiError } from './errors.js';
import { exchange } from './exchange.js';
import {
  type CallSpec,
  failure,
  type HttpAnswer,
  parseRetryAfter,
  readBody,
  readResult,
} from './response.js';
import { undici } from './undici.js';

export interface ApiClientOptions {
  /** Base URL of the API, with or without a trailing slash. */
  baseUrl: string;
  /** Sent as `x-api-key` on every operation but `listOrgUsers`. */
  apiKey: string;
  /** Sent as `Authorization: Bearer` by `listOrgUsers`, the one operation that refuses API keys. */
  bearerToken?: string | undefined;
  /**
   * Per-call time limit covering connect, headers and body. Default 30 000 ms. A call is cut off
   * after it, at most DEADLINE_GRANULE_MS (0.1 s) later (see `Deadlines`).
   */
  timeoutMs?: number | undefined;
  /** Called once per call, after it ends, success or failure. Never given a credential. */
  onCall?: ((call: ApiCallRecord) => void) | undefined;
  /** The undici dispatcher to use. Default: a keep-alive Pool to the base URL's origin, owned (and closed) by the client. */
  dispatcher?: Dispatcher | undefined;
  /** Awaited before every request, e.g. a rate limiter shared by every worker. */
  beforeCall?: ((operation: string, signal: AbortSignal) => Promise<void>) | undefined;
  /**
   * The largest successful answer read, in bytes; a larger one fails the call (type `Too-Large`,
   * not retried) instead of filling the memory. Default 128 MiB: listing 10,000 workspaces takes
   * about 21 MB. Error answers are read to ERROR_BODY_BYTES whatever this says.
   */
  maxBodyBytes?: number | undefined;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

export interface ApiResponse<T> {
  result: T;
  /** The envelope's RequestID; undefined where the operation answers without an envelope. */
  requestId: string | undefined;
  /** The envelope's Message; undefined where the operation answers without an envelope. */
  message: string | undefined;
}

export interface ApiCallRecord {
  operation: string;
  method: string;
  path: string;
  status: number | undefined;
  requestId: string | undefined;
  durationMs: number;
  error?: ApiError;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BODY_BYTES = 128 * 2 ** 20;

/**
 * How much of an error answer is read: an error envelope takes a few hundred bytes, and what a
 * gateway or a broken server sends beyond this (a 300 MB 500 page) is never read at all.
 */
export const ERROR_BODY_BYTES = 16 * 2 ** 10;

/**
 * One HTTP call per operation: credentials, the time limit, cancellation, the call record, and
 * every failure (network, timeout, error answer, unexpected body) mapped to an {@link ApiError}.
 * It knows no operation: `ApiClient` says what to call.
 */
export class Transport {
  /** Where `#send` points the dispatcher, split once from `baseUrl` (a parse per call cost 5 µs). */
  readonly #origin: string;
  readonly #basePath: string;
  readonly #apiKey: string;
  readonly #bearerToken: string | undefined;
  readonly #timeoutMs: number;
  readonly #onCall: ((call: ApiCallRecord) => void) | undefined;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #beforeCall: ((operation: string, signal: AbortSignal) => Promise<void>) | undefined;
  readonly #maxBodyBytes: number;
  readonly #deadlines = new Deadlines();

  constructor(options: ApiClientOptions) {
    const base = new URL(options.baseUrl);
    this.#origin = base.origin;
    this.#basePath = base.pathname.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#bearerToken = options.bearerToken;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#onCall = options.onCall;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#beforeCall = options.beforeCall;
    this.#maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    // a Pool, not an Agent: every call goes to the one origin, and an Agent's lookup of it on each
    // dispatch cost about 6 µs a call
    this.#dispatcher =
      options.dispatcher ??
      new (undici().Pool)(base.origin, {
        // undici 8 negotiates HTTP/2 where TLS offers it; the time limits and the failure mapping
        // are tested over HTTP/1.1 only (the simulator speaks nothing else), so stay on it
        allowH2: false,
        keepAliveTimeout: 30_000,
        connect: { timeout: Math.min(this.#timeoutMs, 10_000) },
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
  }

  /** Closes the connections the transport opened. */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  async call<S extends z.ZodType>(
    spec: CallSpec<S>,
    options: CallOptions = {},
  ): Promise<ApiResponse<z.output<S>>> {
    const started = performance.now();
    let status: number | undefined;
    let requestId: string | undefined;
    try {
      const { body, http } = await this.#send(spec, options);
      status = http.status;
      requestId = body.requestId;
      const result = readResult(spec, body, http);
      this.#notify(this.#record(spec, status, requestId, started));
      return { result, requestId: body.requestId, message: body.message };
    } catch (error) {
      const apiError =
        error instanceof ApiError ? error : failure(spec, { status, type: 'Unknown', reason: String(error) });
      this.#notify({ ...this.#record(spec, apiError.status, apiError.requestId, started), error: apiError });
      throw apiError;
    }
  }

  /** An observer's failure must not turn a good API call into a failed one. */
  #notify(record: ApiCallRecord): void {
    try {
      this.#onCall?.(record);
    } catch {
      // observers (logging, metrics) are best-effort by design
    }
  }

  #record(
    spec: CallSpec<z.ZodType>,
    status: number | undefined,
    requestId: string | undefined,
    started: number,
  ) {
    return {
      operation: spec.operation,
      method: spec.method,
      path: spec.path,
      status,
      requestId,
      durationMs: performance.now() - started,
    };
  }

  async #send(spec: CallSpec<z.ZodType>, options: CallOptions) {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (spec.auth === 'bearer') {
      if (!this.#bearerToken) {
        throw failure(spec, {
          type: 'Unauthorized',
          reason:
            "no bearer token configured: this operation does not accept the API key; set NIGHTSHIFT_BEARER_TOKEN (bearerToken in the client's options)",
        });
      }
      headers.authorization = `Bearer ${this.#bearerToken}`;
    } else {
      headers['x-api-key'] = this.#apiKey;
    }
    let body: string | undefined;
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }

    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const deadline = this.#deadlines.forCall(timeoutMs, options.signal);
    const { signal } = deadline;
    let status: number;
    let read: BodyPrefix;
    let retryAfter: string | string[] | undefined;
    try {
      await this.#beforeCall?.(spec.operation, signal);
      const answer = await exchange(
        this.#dispatcher,
        { origin: this.#origin, path: this.#basePath + spec.path, method: spec.method, headers, body },
        deadline,
        (status) => (status >= 400 ? ERROR_BODY_BYTES : this.#maxBodyBytes),
      );
      status = answer.status;
      retryAfter = answer.headers['retry-after'];
      read = answer.read;
    } catch (error) {
      if (options.signal?.aborted) {
        throw failure(spec, { type: 'Aborted', reason: 'the call was cancelled', cause: error });
      }
      if (deadline.expired || isUndiciTimeout(error)) {
        throw failure(spec, {
          type: 'Timeout',
          reason: `no complete answer within ${timeoutMs} ms`,
          cause: error,
        });
      }
      throw failure(spec, { type: 'Network', reason: describeNetworkError(error), cause: error });
    }
    const http: HttpAnswer = { status, retryAfterMs: parseRetryAfter(retryAfter) };
    if (read.truncated && status < 400)
      throw failure(spec, {
        status,
        type: 'Too-Large',
        reason: `the answer is larger than ${this.#maxBodyBytes} bytes (maxBodyBytes); not read further`,
      });
    const text = withoutCutTail(read, this.#longestSecret());
    const cutAt = read.truncated ? ERROR_BODY_BYTES : undefined;
    return { body: readBody(spec, text, http, (text) => this.#scrub(text), cutAt), http };
  }

  #longestSecret(): number {
    return Math.max(this.#apiKey.length, this.#bearerToken?.length ?? 0);
  }

  /** Servers sometimes echo what they were sent; a credential must never travel on in an error. */
  #scrub(text: string): string {
    let out = text;
    for (const secret of [this.#apiKey, this.#bearerToken]) {
      if (secret && secret.length >= 4 && out.includes(secret)) out = out.split(secret).join('[redacted]');
    }
    return out;
  }
}

function isUndiciTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  );
}

function describeNetworkError(error: unknown): string {
  const err = error as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = err?.cause?.code ?? err?.code;
  const message = err?.cause?.message ?? err?.message ?? String(error);
  return typeof code === 'string' ? `${code}: ${String(message)}` : String(message);
}
