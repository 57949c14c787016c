export { ApiClient } from './client.js';
export { ApiError, type ApiErrorKind, isRetryable } from './errors.js';
export { parseRetryAfter } from './response.js';
export * from './schemas.js';
export type { ApiCallRecord, ApiClientOptions, ApiResponse, CallOptions } from './transport.js';
