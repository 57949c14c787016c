import {
  type AuthScheme,
  type HttpMethod,
  OPERATION_NAMES,
  OPERATIONS,
  type OperationName,
} from '../api/index.js';

export { OPERATION_NAMES, type OperationName };

export interface OperationRoute {
  name: OperationName;
  method: HttpMethod;
  /** Fastify route syntax; parameter names are the spec's. */
  url: string;
  auth: AuthScheme;
}

/** The route of every operation the simulator serves, from the API's operation table. */
export const OPERATION_ROUTES: readonly OperationRoute[] = OPERATION_NAMES.map((name) => {
  const { method, path, auth } = OPERATIONS[name];
  return { name, method, url: path, auth };
});
