import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { type BodyPrefix, parseRetryAfter, readAtMost, undici, withoutCutTail } from '../api/index.js';
import { retryDelay } from '../engine/index.js';
import { NightshiftError } from '../errors/index.js';
import { type Logger, silentLogger } from '../log/index.js';

/** Where a message goes. The URL is a secret: it is used for the request and for nothing else. */
export interface WebhookSink {
  /** The sink's name in the policy: the only way logs and errors refer to it. */
  readonly name: string;
  readonly url: string;
  /** How long one attempt may take, answer included. */
  readonly timeoutMs: number;
}

export interface WebhookRetryOptions {
  /** Attempts in total, the first included. Default 4. */
  attempts?: number;
  /** Wait before the first retry, doubled after each (with jitter). Default 1000 ms. */
  backoffMs?: number;
  /**
   * The longest single wait. A `Retry-After` beyond it ends the send at once rather than holding
   * the worker: the next run tries again. Default 30 000 ms.
   */
  maxDelayMs?: number;
}

export interface PostWebhookOptions extends WebhookRetryOptions {
  /** The undici dispatcher. Default: undici's global one. */
  dispatcher?: Dispatcher;
  /** Ends the send, waits included (e.g. at shutdown). */
  signal?: AbortSignal;
  /** Where each failed attempt is logged (warn), by the sink's name. Default: nowhere. */
  log?: Logger;
}

export const WEBHOOK_DEFAULTS: Required<WebhookRetryOptions> = {
  attempts: 4,
  backoffMs: 1_000,
  maxDelayMs: 30_000,
};

export type WebhookErrorCode =
  /** The webhook answered with a status other than 2xx. */
  | 'WEBHOOK_STATUS'
  /** No answer: refused, reset, DNS, TLS. */
  | 'WEBHOOK_NETWORK'
  /** No complete answer within the sink's timeout. */
  | 'WEBHOOK_TIMEOUT'
  /** The caller's signal ended the send. */
  | 'WEBHOOK_ABORTED';

/**
 * A message that could not be delivered. The message names the sink, never its URL, and anything
 * the server said is scrubbed of the URL before it is kept.
 */
export class WebhookError extends NightshiftError {
  override name = 'WebhookError';
  constructor(
    readonly code: WebhookErrorCode,
    readonly sink: string,
    readonly detail: {
      readonly attempts: number;
      readonly status?: number | undefined;
      /** What went wrong, scrubbed: an error code or the start of the response body. */
      readonly reason: string;
      readonly retryable: boolean;
    },
  ) {
    const status = detail.status === undefined ? '' : ` ${detail.status}`;
    super(
      `webhook "${sink}":${status} ${detail.reason} (${detail.attempts} attempt${detail.attempts === 1 ? '' : 's'})`,
    );
  }

  get attempts(): number {
    return this.detail.attempts;
  }
  get status(): number | undefined {
    return this.detail.status;
  }
  get retryable(): boolean {
    return this.detail.retryable;
  }
}

export interface Delivery {
  readonly status: number;
  readonly attempts: number;
}

/** Statuses worth another attempt: the server may answer differently in a moment. */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

/**
 * `text` with every form of `url` that could identify the webhook replaced: the whole URL, and its
 * path and query, where services such as Slack keep the secret.
 */
export function scrubUrl(text: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return text.split(url).join('[webhook]');
  }
  const forms = [
    url,
    parsed.href,
    `${parsed.origin}${parsed.pathname}`,
    `${parsed.pathname}${parsed.search}`,
    parsed.search.length > 1 ? parsed.search : '',
    parsed.pathname.length > 1 ? parsed.pathname : '',
    parsed.username,
    parsed.password,
  ]
    .filter((form) => form.length > 1)
    .sort((a, b) => b.length - a.length);
  let scrubbed = text;
  for (const form of forms) scrubbed = scrubbed.split(form).join('[webhook]');
  return scrubbed;
}

/** Most characters of a response body an error keeps. */
const MAX_REASON = 200;

/**
 * How much of an error answer is read: enough for its first words, which is all an error keeps.
 * The rest is not read at all (a 300 MB error page costs 4 kB, not 300 MB per attempt).
 */
export const WEBHOOK_ERROR_BODY_BYTES = 4 * 2 ** 10;

function bodyReason(body: BodyPrefix, url: string): string {
  const flat = scrubUrl(withoutCutTail(body, url.length), url).replace(/\s+/g, ' ').trim();
  if (flat === '') return 'no body';
  return flat.length <= MAX_REASON ? flat : `${flat.slice(0, MAX_REASON)}…`;
}

function networkReason(error: unknown, url: string): string {
  const err = error as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = err?.cause?.code ?? err?.code;
  const message = String(err?.cause?.message ?? err?.message ?? error);
  return scrubUrl(typeof code === 'string' ? `${code}: ${message}` : message, url);
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

function isTimeout(error: unknown): boolean {
  const err = error as { code?: unknown; name?: unknown; cause?: { code?: unknown } };
  return (
    err?.name === 'TimeoutError' ||
    TIMEOUT_CODES.has(String(err?.code)) ||
    TIMEOUT_CODES.has(String(err?.cause?.code))
  );
}

interface AttemptResult {
  readonly status?: number;
  readonly retryAfterMs?: number | undefined;
  readonly error?: WebhookError;
}

async function attempt(
  sink: WebhookSink,
  body: string,
  attemptNo: number,
  options: PostWebhookOptions,
): Promise<AttemptResult> {
  const timeout = AbortSignal.timeout(sink.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const res = await undici().request(sink.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'nightshift' },
      body,
      signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    if (res.statusCode >= 200 && res.statusCode < 300) {
      await res.body.dump();
      return { status: res.statusCode };
    }
    const answer = await readAtMost(res.body, WEBHOOK_ERROR_BODY_BYTES);
    const retryable = isRetryableStatus(res.statusCode);
    return {
      status: res.statusCode,
      retryAfterMs: parseRetryAfter(res.headers['retry-after']),
      error: new WebhookError('WEBHOOK_STATUS', sink.name, {
        attempts: attemptNo,
        status: res.statusCode,
        reason: bodyReason(answer, sink.url),
        retryable,
      }),
    };
  } catch (error) {
    if (options.signal?.aborted) {
      return {
        error: new WebhookError('WEBHOOK_ABORTED', sink.name, {
          attempts: attemptNo,
          reason: 'the send was cancelled',
          retryable: false,
        }),
      };
    }
    if (timeout.aborted || isTimeout(error)) {
      return {
        error: new WebhookError('WEBHOOK_TIMEOUT', sink.name, {
          attempts: attemptNo,
          reason: `no complete answer within ${sink.timeoutMs} ms`,
          retryable: true,
        }),
      };
    }
    return {
      error: new WebhookError('WEBHOOK_NETWORK', sink.name, {
        attempts: attemptNo,
        reason: networkReason(error, sink.url),
        retryable: true,
      }),
    };
  }
}

/**
 * POSTs `payload` as JSON to the sink, retrying 5xx, 429, 408, timeouts and network errors with
 * exponential backoff (a `Retry-After` is a floor), up to `attempts` in total. This is the one
 * retry owner for webhooks. Resolves on a 2xx; rejects with a WebhookError otherwise. A retried
 * POST may reach the receiver twice (an answer lost on the way back): delivery is at least once.
 */
export async function postWebhook(
  sink: WebhookSink,
  payload: unknown,
  options: PostWebhookOptions = {},
): Promise<Delivery> {
  const { attempts, backoffMs, maxDelayMs } = { ...WEBHOOK_DEFAULTS, ...definedOnly(options) };
  const log = options.log ?? silentLogger;
  const body = JSON.stringify(payload);
  for (let attemptNo = 1; ; attemptNo++) {
    const result = await attempt(sink, body, attemptNo, options);
    if (!result.error) return { status: result.status ?? 200, attempts: attemptNo };
    const error = result.error;
    if (!error.retryable || attemptNo >= attempts) throw error;
    const delayMs = retryDelay(
      { attempts, backoff: backoffMs, strategy: 'exponential' },
      attemptNo,
      result.retryAfterMs,
    );
    if (result.retryAfterMs !== undefined && result.retryAfterMs > maxDelayMs) {
      throw new WebhookError(error.code, sink.name, {
        ...error.detail,
        reason: `${error.detail.reason}; Retry-After ${Math.round(result.retryAfterMs / 1000)} s is longer than ${Math.round(maxDelayMs / 1000)} s`,
        retryable: false,
      });
    }
    const waitMs = Math.min(delayMs, maxDelayMs);
    log.warn(
      { sink: sink.name, attempt: attemptNo, code: error.code, status: error.status, delayMs: waitMs },
      'webhook attempt failed; retrying',
    );
    try {
      await sleep(waitMs, undefined, options.signal ? { signal: options.signal } : undefined);
    } catch {
      throw new WebhookError('WEBHOOK_ABORTED', sink.name, {
        attempts: attemptNo,
        reason: 'the send was cancelled',
        retryable: false,
      });
    }
  }
}

function definedOnly(options: WebhookRetryOptions): WebhookRetryOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}
