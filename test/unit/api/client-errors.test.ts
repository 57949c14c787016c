import { createServer } from 'node:net';
import { Pool } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  failure,
  ok,
  type ScriptedServer,
  startScriptedServer,
} from '../../../bench/harness/scripted-server.js';
import { type ApiCallRecord, ApiClient, ApiError, isRetryable } from '../../../src/api/index.js';
import { parseRetryAfter } from '../../../src/api/response.js';
import { rejectionOf } from '../../helpers/rejection.js';

const API_KEY = 'key-must-not-leak-01';
const TOKEN = 'token-must-not-leak-02';

let server: ScriptedServer;
let calls: ApiCallRecord[];
const clients: ApiClient[] = [];

beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  server.requests.length = 0;
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function makeClient(extra: { timeoutMs?: number; baseUrl?: string } = {}) {
  calls = [];
  const client = new ApiClient({
    baseUrl: extra.baseUrl ?? server.url,
    apiKey: API_KEY,
    bearerToken: TOKEN,
    timeoutMs: extra.timeoutMs,
    onCall: (call) => calls.push(call),
  });
  clients.push(client);
  return client;
}

const rejection = (promise: Promise<unknown>) => rejectionOf(promise, ApiError);

describe('ApiError carries what was called and what came back', () => {
  it('formats the message as operation, method, path, status, type, request id and server message', async () => {
    server.replyJson(500, failure('Internal-Error', 'database unavailable', 'abc'));
    const error = await rejection(makeClient().pauseWorkspace('wg1', 'ws1'));
    expect(error.message).toBe(
      'pauseWorkspace POST /controller/v4/v2/workgroups/wg1/workspaces/ws1/pause → 500 Internal-Error (RequestID abc): database unavailable [database unavailable]',
    );
    expect(error).toMatchObject({
      operation: 'pauseWorkspace',
      method: 'POST',
      path: '/controller/v4/v2/workgroups/wg1/workspaces/ws1/pause',
      status: 500,
      type: 'Internal-Error',
      requestId: 'abc',
      retryable: true,
    });
    expect(error.details).toEqual([
      { FieldName: '', Reason: 'database unavailable', Type: 'Internal-Error' },
    ]);
  });

  it('names the offending field of a 400 Bad-Request and does not retry it', async () => {
    server.replyJson(400, failure('Bad-Request', 'required', 'r400', 'backup_id'));
    const error = await rejection(makeClient().restoreBackup('wg', 'ws', ''));
    expect(error.message).toContain('[backup_id: required]');
    expect(error.type).toBe('Bad-Request');
    expect(error.retryable).toBe(false);
  });

  it('treats an envelope with Error true as a failure even under HTTP 200', async () => {
    server.replyJson(200, failure('Not-Found', 'no such workspace', 'r200'));
    const error = await rejection(makeClient().resumeWorkspace('wg', 'missing'));
    expect(error.status).toBe(200);
    expect(error.type).toBe('Not-Found');
    expect(error.requestId).toBe('r200');
    expect(error.retryable).toBe(false);
  });

  it('derives the type from the status when the error envelope has no details', async () => {
    server.replyJson(404, { Error: true, ErrorDetails: [], Message: 'gone', RequestID: 'r404' });
    const error = await rejection(makeClient().getCloudProvider('cp-x'));
    expect(error.type).toBe('Not-Found');
    expect(error.message).toContain('(RequestID r404): gone');
  });

  it('reports a non-JSON body such as a gateway HTML page with a short snippet', async () => {
    const html = `<html><head><title>502 Bad Gateway</title></head><body>${'x'.repeat(5000)}</body></html>`;
    server.reply((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(html);
    });
    const error = await rejection(makeClient().listWorkgroups());
    expect(error.status).toBe(502);
    expect(error.type).toBe('Internal-Error');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('<title>502 Bad Gateway</title>');
    expect(error.message.length).toBeLessThan(400);
  });

  it('reports a 200 whose body is not JSON as a retryable Unknown error', async () => {
    server.replyJson(200, 'not json at all');
    const error = await rejection(makeClient().listWorkgroups());
    expect(error.type).toBe('Unknown');
    expect(error.retryable).toBe(true);
  });

  it('reads Retry-After seconds of a 429 into retryAfterMs', async () => {
    server.replyJson(429, failure('Quota-Exceed', 'slow down', 'r429'), { 'retry-after': '3' });
    const error = await rejection(makeClient().listAllowedIps('wg'));
    expect(error.type).toBe('Quota-Exceed');
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(3000);
  });
});

describe('the base URL', () => {
  it('may carry a path: every operation goes under it, with or without a trailing slash', async () => {
    for (const base of [`${server.url}/gateway/api`, `${server.url}/gateway/api/`]) {
      server.replyJson(200, ok('paused'));
      await makeClient({ baseUrl: base }).pauseWorkspace('wg1', 'ws1');
    }
    expect(server.requests.map((request) => request.url)).toEqual([
      '/gateway/api/controller/v4/v2/workgroups/wg1/workspaces/ws1/pause',
      '/gateway/api/controller/v4/v2/workgroups/wg1/workspaces/ws1/pause',
    ]);
  });
});

describe('network failures and timeouts', () => {
  it('reports a refused connection as a retryable Network error without a status', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const error = await rejection(makeClient({ baseUrl: `http://127.0.0.1:${port}` }).listWorkgroups());
    expect(error.type).toBe('Network');
    expect(error.status).toBeUndefined();
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('reports a server that never answers as a retryable Timeout after timeoutMs', async () => {
    server.reply(() => {
      // never answer
    });
    const started = Date.now();
    const error = await rejection(makeClient({ timeoutMs: 200 }).listWorkgroups());
    expect(error.type).toBe('Timeout');
    expect(error.retryable).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('lets one call override the timeout', async () => {
    server.reply(() => {
      // never answer
    });
    const error = await rejection(makeClient({ timeoutMs: 60_000 }).listWorkgroups({ timeoutMs: 100 }));
    expect(error.type).toBe('Timeout');
    expect(error.message).toContain('100 ms');
  });

  it('reports a caller abort as Aborted, not retryable', async () => {
    server.reply(() => {
      // never answer
    });
    const controller = new AbortController();
    const pending = makeClient().listWorkgroups({ signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const error = await rejection(pending);
    expect(error.type).toBe('Aborted');
    expect(error.retryable).toBe(false);
  });

  it('reports a caller abort at once even while the call still waits for a connection', async () => {
    server.reply(() => {
      // never answer: the one connection stays taken
    });
    const pool = new Pool(server.url, { connections: 1 });
    const client = new ApiClient({ baseUrl: server.url, apiKey: API_KEY, dispatcher: pool });
    const first = new AbortController();
    const holding = rejection(client.listWorkgroups({ signal: first.signal }));
    const second = new AbortController();
    const queued = rejection(client.listWorkgroups({ signal: second.signal }));
    const started = Date.now();
    setTimeout(() => second.abort(), 50);
    const error = await queued;
    expect(error.type).toBe('Aborted');
    expect(Date.now() - started).toBeLessThan(1_000);
    first.abort();
    expect((await holding).type).toBe('Aborted');
    await pool.destroy();
  });

  it('reports a connection dropped mid-request as a retryable Network error', async () => {
    server.reply((_req, res) => res.socket?.destroy());
    const error = await rejection(makeClient().listWorkgroups());
    expect(error.type).toBe('Network');
    expect(error.retryable).toBe(true);
  });
});

describe('the retry decision', () => {
  it.each([
    [500, 'Internal-Error', true],
    [503, 'Unknown', true],
    [429, 'Quota-Exceed', true],
    [200, 'Quota-Exceed', true],
    [400, 'Quota-Exceed', true],
    [200, 'Internal-Error', true],
    [200, 'Unknown', true],
    [undefined, 'Network', true],
    [undefined, 'Timeout', true],
    [400, 'Bad-Request', false],
    [500, 'Bad-Request', false],
    [404, 'Not-Found', false],
    [403, 'Forbidden', false],
    [401, 'Unauthorized', false],
    [200, 'API-Disabled', false],
    [409, 'Unknown', false],
    [400, 'Internal-Error', false],
    [undefined, 'Aborted', false],
  ] as const)('status %s with type %s is retryable: %s', (status, type, expected) => {
    expect(isRetryable(status, type)).toBe(expected);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('onCall and secrets', () => {
  it('reports a failed call with operation, method, path, status, request id, duration and the error', async () => {
    server.replyJson(500, failure('Internal-Error', 'boom', 'rid-bad'));
    await makeClient()
      .pauseWorkspace('wg', 'ws')
      .catch(() => undefined);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      operation: 'pauseWorkspace',
      method: 'POST',
      path: '/controller/v4/v2/workgroups/wg/workspaces/ws/pause',
      status: 500,
      requestId: 'rid-bad',
    });
    expect(calls[0]?.error).toBeInstanceOf(ApiError);
    expect(calls[0]?.durationMs).toBeGreaterThan(0);
  });

  it('reports a successful call without an error', async () => {
    const c = makeClient();
    server.replyJson(200, ok([], 'rid-ok'));
    await c.listWorkgroups();
    expect(calls).toEqual([
      expect.objectContaining({ operation: 'listWorkgroups', status: 200, requestId: 'rid-ok' }),
    ]);
    expect(Object.keys(calls[0] ?? {}).sort()).toEqual([
      'durationMs',
      'method',
      'operation',
      'path',
      'requestId',
      'status',
    ]);
  });

  it('keeps working when the onCall observer throws', async () => {
    const c = new ApiClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      onCall: () => {
        throw new Error('observer broke');
      },
    });
    clients.push(c);
    server.replyJson(200, ok([]));
    await expect(c.listWorkgroups()).resolves.toMatchObject({ result: [] });
  });

  it('never puts the API key or bearer token in an error or onCall data, even when the server echoes them', async () => {
    const c = makeClient();
    server.reply((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          failure(
            'Unauthorized',
            `key ${req.headers['x-api-key']} / ${req.headers.authorization} refused`,
            'r401',
          ),
        ),
      );
    });
    const errors = [
      await rejection(c.listWorkgroups()),
      await rejection(c.listOrgUsers()),
      await rejection(c.deleteDatabase('wg', 'db')),
    ];
    server.reply((req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(`<p>${req.headers['x-api-key']}</p>`);
    });
    errors.push(await rejection(c.listWorkgroups()));
    const everything = JSON.stringify([
      errors.map((e) => ({ message: e.message, stack: e.stack, json: e.toJSON() })),
      calls.map((call) => ({ ...call, error: call.error?.toJSON() })),
    ]);
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toContain(TOKEN);
    expect(everything).toContain('[redacted]');
  });
});
