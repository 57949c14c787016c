import type { IncomingHttpHeaders } from 'node:http';
import type { AuthScheme } from '../api/index.js';
import { SimError } from './envelope.js';

export interface Credentials {
  apiKey: string;
  bearerToken: string;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Null when the request carries the credential its operation needs, else the 401 to answer. */
export function checkAuth(
  scheme: AuthScheme,
  headers: IncomingHttpHeaders,
  credentials: Credentials,
): SimError | null {
  if (scheme === 'apiKey') {
    const key = headers['x-api-key'];
    if (key === undefined)
      return new SimError('Unauthorized', 'x-api-key', 'the x-api-key header is required');
    if (key !== credentials.apiKey)
      return new SimError('Unauthorized', 'x-api-key', 'the API key is not valid');
    return null;
  }
  const authorization = headers.authorization;
  if (authorization === undefined) {
    const reason =
      headers['x-api-key'] === undefined
        ? 'an Authorization: Bearer token is required'
        : 'list org users does not accept an API key; send Authorization: Bearer <token>';
    return new SimError('Unauthorized', 'Authorization', reason);
  }
  const token = BEARER.exec(authorization)?.[1];
  if (token === undefined)
    return new SimError('Unauthorized', 'Authorization', 'the Authorization header must be "Bearer <token>"');
  if (token !== credentials.bearerToken)
    return new SimError('Unauthorized', 'Authorization', 'the bearer token is not valid');
  return null;
}
