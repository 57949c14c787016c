import { randomBytes } from 'node:crypto';
import type { ApiErrorType, Envelope } from '../api/index.js';
import { NightshiftError } from '../errors/index.js';

/**
 * HTTP status per error `Type`. The spec names the types but not their statuses; these are
 * the simulator's choices, listed in docs/simulator.md.
 */
export const STATUS_BY_TYPE: Record<ApiErrorType, number> = {
  'Bad-Request': 400,
  Unauthorized: 401,
  Forbidden: 403,
  'Not-Found': 404,
  'Quota-Exceed': 429,
  'Internal-Error': 500,
  'API-Disabled': 503,
  Unknown: 500,
};

/** An answer other than success: becomes one ErrorDetails entry in an envelope without `Result`. */
export class SimError extends NightshiftError {
  override name = 'SimError';
  readonly code = 'NS_SIM_REFUSED';

  constructor(
    readonly type: ApiErrorType,
    readonly fieldName: string,
    readonly reason: string,
  ) {
    super(reason);
  }

  get status(): number {
    return STATUS_BY_TYPE[this.type];
  }
}

export const badRequest = (fieldName: string, reason: string) =>
  new SimError('Bad-Request', fieldName, reason);
export const notFound = (fieldName: string, reason: string) => new SimError('Not-Found', fieldName, reason);

/** Serialised JSON: a Buffer for large cached results, which are then never re-encoded. */
export type Json = string | Buffer;

const CLOSE = Buffer.from('}');

/**
 * A success envelope around an already serialised `Result`, so a cached result is not
 * serialised again for every request that only differs in its RequestID.
 */
export function successBody(requestId: string, message: string, result: Json): Json {
  const head = `{"Error":false,"ErrorDetails":[],"Message":${JSON.stringify(message)},"RequestID":${JSON.stringify(requestId)},"Result":`;
  return typeof result === 'string' ? `${head}${result}}` : Buffer.concat([Buffer.from(head), result, CLOSE]);
}

/** Error bodies carry no `Result`, as in the spec's samples. */
export function errorBody(requestId: string, error: SimError): string {
  const envelope: Envelope = {
    Error: true,
    ErrorDetails: [{ FieldName: error.fieldName, Reason: error.reason, Type: error.type }],
    Message: error.reason,
    RequestID: requestId,
  };
  return JSON.stringify(envelope);
}

/** Request ids unique across restarts (random prefix) and cheap per request (a counter). */
export function createRequestIdFactory(): () => string {
  const prefix = randomBytes(4).toString('hex');
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(16).padStart(6, '0')}`;
}
