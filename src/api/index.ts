export {
  type ApiCallRecord,
  ApiClient,
  type ApiClientOptions,
  type ApiResponse,
  type CallOptions,
  parseRetryAfter,
} from './client.js';
export { ApiError, type ApiErrorKind, isRetryable } from './errors.js';
export * from './schemas.js';
