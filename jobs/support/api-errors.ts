import { ApiError } from '../../src/api/index.js';

type ApiErrorFields = ConstructorParameters<typeof ApiError>[0];

/** What the server (or the network) said: the message past `<call> → <outcome>: `. */
export function apiErrorReason(error: ApiError): string {
  return error.message.slice(error.message.indexOf(': ', error.message.indexOf('→')) + 2);
}

/**
 * `error` told another way: the same call, status, type and request id, so it is retried (or
 * not) and reported as the original was, with the reason given and only those of the details and
 * `retryAfterMs` given too.
 */
export function rewordApiError(
  error: ApiError,
  fields: Pick<ApiErrorFields, 'reason' | 'details' | 'retryAfterMs'>,
): ApiError {
  return new ApiError({
    operation: error.operation,
    method: error.method,
    path: error.path,
    status: error.status,
    type: error.type,
    requestId: error.requestId,
    ...fields,
  });
}
