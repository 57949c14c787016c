import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Reply = (req: RecordedRequest, res: ServerResponse) => void;

/** A real HTTP server on 127.0.0.1 that answers with whatever the test scripts. */
export interface ScriptedServer {
  url: string;
  requests: RecordedRequest[];
  /** Sets how the next requests are answered. */
  reply(handler: Reply): void;
  /** Answers every request with this status and JSON (or raw string) body. */
  replyJson(status: number, body: unknown, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

export async function startScriptedServer(): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  let handler: Reply = (_req, res) => {
    res.statusCode = 500;
    res.end('no reply scripted');
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      handler(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply(next) {
      handler = next;
    },
    replyJson(status, body, headers = {}) {
      handler = (_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The spec's success envelope around a Result. */
export function ok(result: unknown, requestId = 'req-1', message = 'ok') {
  return { Error: false, ErrorDetails: [], Message: message, RequestID: requestId, Result: result };
}

/** The spec's error envelope: no Result. */
export function failure(type: string, reason: string, requestId = 'req-err', fieldName = '') {
  return {
    Error: true,
    ErrorDetails: [{ FieldName: fieldName, Reason: reason, Type: type }],
    Message: reason,
    RequestID: requestId,
  };
}
