import type { z } from 'zod';
import { ApiError, type ApiErrorKind, typeForStatus } from './errors.js';
import { parserFor } from './result-parser.js';
import { EnvelopeSchema, type ErrorDetail } from './schemas.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One operation as the transport sends it: where, how, and what its Result must look like. */
export interface CallSpec<S extends z.ZodType> {
  operation: string;
  method: HttpMethod;
  path: string;
  body?: unknown;
  result: S;
  auth: 'apiKey' | 'bearer';
  /** The operation answers a bare body instead of the envelope (list org users). */
  bare?: boolean;
  /** A list operation whose null or missing Result means "none". */
  list?: boolean;
}

/** What came back besides the body. */
export interface HttpAnswer {
  status: number;
  retryAfterMs: number | undefined;
}

/** The body, read: the Result still to be checked against the operation's schema. */
export interface ReadBody {
  payload: unknown;
  requestId: string | undefined;
  message: string | undefined;
}

/** Removes every credential from a text the server sent back. */
export type Scrub = (text: string) => string;

export interface FailureFields {
  status?: number | undefined;
  type: ApiErrorKind;
  reason: string;
  requestId?: string | undefined;
  details?: ErrorDetail[];
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

const SNIPPET_LENGTH = 120;

/** The ApiError of a call to `spec`. */
export function failure(spec: CallSpec<z.ZodType>, fields: FailureFields): ApiError {
  return new ApiError({ operation: spec.operation, method: spec.method, path: spec.path, ...fields });
}

/**
 * Reads the envelope (or the bare body) and turns every failure it reports into an ApiError.
 * `cutAt` says the body was cut after that many bytes (an error answer too large to read whole).
 */
export function readBody(
  spec: CallSpec<z.ZodType>,
  text: string,
  http: HttpAnswer,
  scrub: Scrub,
  cutAt?: number,
): ReadBody {
  if (cutAt !== undefined) throw cutFailure(spec, text, http, scrub, cutAt);
  let json: unknown;
  try {
    json = text.length === 0 ? undefined : JSON.parse(text);
  } catch {
    throw failure(spec, {
      status: http.status,
      type: http.status >= 400 ? typeForStatus(http.status) : 'Unknown',
      reason: `the body is not JSON: "${snippet(text, scrub)}"`,
      retryAfterMs: http.retryAfterMs,
    });
  }
  const isEnvelope = !spec.bare || (isObject(json) && ('RequestID' in json || 'Error' in json));
  if (!isEnvelope) {
    if (http.status >= 400) {
      throw failure(spec, {
        status: http.status,
        type: typeForStatus(http.status),
        reason: `HTTP ${http.status}: "${snippet(text, scrub)}"`,
        retryAfterMs: http.retryAfterMs,
      });
    }
    return { payload: json, requestId: undefined, message: undefined };
  }

  // checked, not rebuilt (`parserFor`): a pause's envelope is parsed 10,000 times on a fleet pause
  const envelope = parserFor(EnvelopeSchema)(json);
  if (!envelope.success) {
    throw failure(spec, {
      status: http.status,
      type: http.status >= 400 ? typeForStatus(http.status) : 'Unknown',
      reason: `the body is not the API's envelope: "${snippet(text, scrub)}"`,
      retryAfterMs: http.retryAfterMs,
    });
  }
  const { Error: failed, ErrorDetails, Message, RequestID, Result } = envelope.data;
  // the request ID and the details travel on into logs and run summaries: scrubbed like the reason
  const requestId = typeof RequestID === 'string' ? scrub(RequestID) : undefined;
  const message = Message ?? undefined;
  if (failed === true || http.status >= 400) {
    // only the spec's three fields travel on, each scrubbed: fields of the server's own go no further
    const details = (ErrorDetails ?? []).map((detail) => {
      const kept: ErrorDetail = {};
      for (const field of ['FieldName', 'Reason', 'Type'] as const) {
        const value = detail[field];
        if (value !== undefined) kept[field] = typeof value === 'string' ? scrub(value) : value;
      }
      return kept;
    });
    throw failure(spec, {
      status: http.status,
      type: details[0]?.Type ?? typeForStatus(http.status),
      requestId,
      details,
      reason: scrub(describeFailure(message, details, http.status)),
      retryAfterMs: http.retryAfterMs,
    });
  }
  return { payload: Result, requestId, message };
}

/** The Result checked against the operation's schema; a shape it does not expect is an ApiError. */
export function readResult<S extends z.ZodType>(
  spec: CallSpec<S>,
  body: { payload: unknown; requestId: string | undefined },
  http: { status: number },
): z.output<S> {
  let payload = body.payload;
  if (spec.bare && !Array.isArray(payload)) payload = [payload];
  if (spec.list) payload ??= [];
  const parsed = parserFor(spec.result)(payload);
  if (parsed.success) return parsed.data;
  throw failure(spec, {
    status: http.status,
    type: 'Unknown',
    requestId: body.requestId,
    reason: `unexpected response shape at ${parsed.where}: ${parsed.message}`,
  });
}

/**
 * The failure of an error answer read only in part: it cannot be parsed, but an envelope names its
 * RequestID and Type near its start, so they are taken from the part read when they are there.
 */
function cutFailure(
  spec: CallSpec<z.ZodType>,
  text: string,
  http: HttpAnswer,
  scrub: Scrub,
  cutAt: number,
): ApiError {
  const requestId = stringField(text, REQUEST_ID_FIELD);
  const type = stringField(text, TYPE_FIELD);
  return failure(spec, {
    status: http.status,
    type: type === undefined ? typeForStatus(http.status) : scrub(type),
    requestId: requestId === undefined ? undefined : scrub(requestId),
    reason: `the body is larger than ${cutAt} bytes; read no further: "${snippet(text, scrub)}"`,
    retryAfterMs: http.retryAfterMs,
  });
}

const REQUEST_ID_FIELD = /"RequestID"\s*:\s*("(?:[^"\\]|\\.){1,200}")/;
const TYPE_FIELD = /"Type"\s*:\s*("(?:[^"\\]|\\.){1,200}")/;

/** The string literal `field` captures in a JSON text that may be cut anywhere; undefined unless it is whole. */
function stringField(text: string, field: RegExp): string | undefined {
  const literal = field.exec(text)?.[1];
  if (literal === undefined) return undefined;
  try {
    return JSON.parse(literal) as string;
  } catch {
    return undefined;
  }
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  const trimmed = raw.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A short, single-line, secret-free excerpt of a body for an error message. */
function snippet(text: string, scrub: Scrub): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return scrub(flat.length > SNIPPET_LENGTH ? `${flat.slice(0, SNIPPET_LENGTH)}…` : flat);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeFailure(message: string | undefined, details: ErrorDetail[], status: number): string {
  const parts = details
    .map((d) => [d.FieldName, d.Reason].filter(Boolean).join(': '))
    .filter((part) => part.length > 0);
  const head = message || (status >= 400 ? `HTTP ${status}` : 'the API reported an error');
  return parts.length > 0 ? `${head} [${parts.join('; ')}]` : head;
}
