export { type BodyPrefix, readAtMost, withoutCutTail } from './body.js';
export { ApiClient } from './client.js';
export { ApiError, type ApiErrorKind, isRetryable } from './errors.js';
export {
  type AuthScheme,
  OPERATION_NAMES,
  OPERATIONS,
  type Operation,
  type OperationName,
  operationPath,
  READ_OPERATIONS,
  type ReadOperationName,
} from './operations.js';
export { type HttpMethod, parseRetryAfter } from './response.js';
export { parserFor } from './result-parser.js';
export * from './schemas.js';
export {
  type ApiCallRecord,
  type ApiClientOptions,
  type ApiResponse,
  type CallOptions,
  ERROR_BODY_BYTES,
} from './transport.js';
export { undici } from './undici.js';
