export {
  type ApiCallRecord,
  ApiClient,
  type ApiClientOptions,
  type ApiResponse,
  type CallOptions,
} from './client.js';
export { ApiError, type ApiErrorKind, isRetryable } from './errors.js';
export * from './schemas.js';
