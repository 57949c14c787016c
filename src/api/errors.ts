import { NightshiftError } from '../errors/index.js';
import type { ErrorDetail } from './schemas.js';

/**
 * The failure kinds an ApiError reports: the spec's ErrorDetails `Type` values, plus the ones
 * the client assigns itself when no envelope says (`Network`, `Timeout`, `Aborted`, and
 * `Too-Large` for a successful answer over the client's `maxBodyBytes`).
 */
export type ApiErrorKind = string;

/**
 * Types that mean "this request will never succeed as sent": retrying only repeats the refusal
 * (or, for `Too-Large`, the same oversized answer).
 */
const PERMANENT_TYPES = new Set([
  'Bad-Request',
  'Not-Found',
  'Forbidden',
  'Unauthorized',
  'API-Disabled',
  'Too-Large',
]);

/** Types that mean "try again later", whatever status they come with. */
const TRANSIENT_TYPES = new Set(['Internal-Error', 'Quota-Exceed', 'Unknown', 'Network', 'Timeout']);

/**
 * Whether a failure is worth retrying. A permanent Type wins over the status (a 500 that says
 * Bad-Request is still a bad request); `Quota-Exceed` is always a throttle; otherwise the HTTP
 * status decides (5xx, 408 and 429 transient, other 4xx permanent); with no usable status the
 * Type decides.
 */
export function isRetryable(status: number | undefined, type: ApiErrorKind): boolean {
  if (PERMANENT_TYPES.has(type)) return false;
  if (type === 'Quota-Exceed') return true;
  if (type === 'Aborted') return false;
  if (status !== undefined && status >= 400) {
    return status >= 500 || status === 408 || status === 429;
  }
  return TRANSIENT_TYPES.has(type);
}

/** The Type implied by an HTTP status when the body names none. */
export function typeForStatus(status: number): ApiErrorKind {
  if (status === 400) return 'Bad-Request';
  if (status === 401) return 'Unauthorized';
  if (status === 403) return 'Forbidden';
  if (status === 404) return 'Not-Found';
  if (status === 429) return 'Quota-Exceed';
  if (status >= 500) return 'Internal-Error';
  return 'Unknown';
}

export interface ApiErrorFields {
  operation: string;
  method: string;
  path: string;
  status?: number | undefined;
  type: ApiErrorKind;
  requestId?: string | undefined;
  details?: ErrorDetail[] | undefined;
  retryAfterMs?: number | undefined;
  /** What the server (or the network) said, already free of secrets. */
  reason: string;
  cause?: unknown;
}

/**
 * Every failed API call rejects with this. The message says what was called and what came
 * back, e.g. `pauseWorkspace POST /controller/v4/v2/workgroups/wg1/workspaces/ws1/pause → 500
 * Internal-Error (RequestID abc): server message`, and never carries a credential.
 */
export class ApiError extends NightshiftError {
  override name = 'ApiError';
  readonly code = 'NS_API_ERROR';
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly type: ApiErrorKind;
  readonly requestId: string | undefined;
  readonly details: ErrorDetail[];
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(fields: ApiErrorFields) {
    super(formatMessage(fields), fields.cause === undefined ? undefined : { cause: fields.cause });
    this.operation = fields.operation;
    this.method = fields.method;
    this.path = fields.path;
    this.status = fields.status;
    this.type = fields.type;
    this.requestId = fields.requestId;
    this.details = fields.details ?? [];
    this.retryable = isRetryable(fields.status, fields.type);
    this.retryAfterMs = fields.retryAfterMs;
  }

  /** A plain object for logs and run summaries. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      status: this.status,
      type: this.type,
      requestId: this.requestId,
      retryable: this.retryable,
      retryAfterMs: this.retryAfterMs,
      details: this.details,
    };
  }
}

function formatMessage(fields: ApiErrorFields): string {
  const outcome = fields.status === undefined ? fields.type : `${fields.status} ${fields.type}`;
  const requestId = fields.requestId ? ` (RequestID ${fields.requestId})` : '';
  return `${fields.operation} ${fields.method} ${fields.path} → ${outcome}${requestId}: ${fields.reason}`;
}
