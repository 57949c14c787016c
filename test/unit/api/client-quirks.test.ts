import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ok, type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import { ApiClient, ApiError } from '../../../src/api/index.js';

let server: ScriptedServer;
let client: ApiClient;

beforeAll(async () => {
  server = await startScriptedServer();
  client = new ApiClient({ baseUrl: server.url, apiKey: 'quirk-key-123', bearerToken: 'quirk-token-456' });
});
afterAll(async () => {
  await client.close();
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

describe('checkCurrentIp reads the " IsAllowed" key', () => {
  it('reads the key spelled with a leading space, as the spec shows it', async () => {
    server.replyJson(200, ok({ ' IsAllowed': false, CurrentIP: '198.51.100.4' }));
    const { result } = await client.checkCurrentIp('wg1');
    expect(result).toEqual({ isAllowed: false, currentIp: '198.51.100.4' });
  });

  it('also reads the key spelled without the space', async () => {
    server.replyJson(200, ok({ IsAllowed: true, CurrentIP: '2001:db8::1' }));
    const { result } = await client.checkCurrentIp('wg1');
    expect(result).toEqual({ isAllowed: true, currentIp: '2001:db8::1' });
  });

  it('rejects a result that carries neither spelling with an ApiError naming the key', async () => {
    server.replyJson(200, ok({ CurrentIP: '198.51.100.4' }));
    const error = await client.checkCurrentIp('wg1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toContain('IsAllowed');
  });
});

describe('declared-object results', () => {
  const declared = [
    ['deleteBackup', (c: ApiClient) => c.deleteBackup('wg', 'ws', 'bk')],
    [
      'updateDbUserPassword',
      (c: ApiClient) => c.updateDbUserPassword('wg', 'ws', { username: 'u', password: 'p' }),
    ],
    ['upgradeCloudProvider', (c: ApiClient) => c.upgradeCloudProvider('cp', {})],
    ['resumeWorkspace', (c: ApiClient) => c.resumeWorkspace('wg', 'ws')],
    ['pauseWorkspace', (c: ApiClient) => c.pauseWorkspace('wg', 'ws')],
    ['deleteDatabase', (c: ApiClient) => c.deleteDatabase('wg', 'db')],
    ['restoreBackup', (c: ApiClient) => c.restoreBackup('wg', 'ws', 'bk')],
    ['disableAllowList', (c: ApiClient) => c.disableAllowList('wg')],
  ] as const;

  it.each(declared)('%s accepts a plain string Result', async (_name, call) => {
    server.replyJson(200, ok('accepted'));
    expect((await call(client)).result).toBe('accepted');
  });

  it.each(declared)('%s accepts an object Result', async (_name, call) => {
    server.replyJson(200, ok({ state: 'accepted' }));
    expect((await call(client)).result).toEqual({ state: 'accepted' });
  });

  it.each(declared)('%s accepts a missing Result', async (_name, call) => {
    server.replyJson(200, { Error: false, ErrorDetails: [], Message: 'ok', RequestID: 'r' });
    expect((await call(client)).result).toBeUndefined();
  });
});

describe('createDbUser metadata', () => {
  it('accepts metadata as a string, as the spec sample shows', async () => {
    server.replyJson(200, ok({ username: 'app', metadata: 'created-by=nightshift' }));
    const { result } = await client.createDbUser('wg', 'ws', { username: 'app', password: 'longenough' });
    expect(result.metadata).toBe('created-by=nightshift');
  });

  it('accepts metadata as an object, as the spec declares it', async () => {
    server.replyJson(200, ok({ username: 'app', metadata: { team: 'ops' } }));
    const { result } = await client.createDbUser('wg', 'ws', { username: 'app', password: 'longenough' });
    expect(result.metadata).toEqual({ team: 'ops' });
  });
});

describe('listOrgUsers', () => {
  it('sends the bearer token and never the API key', async () => {
    server.replyJson(200, [{ id: 'u1' }]);
    await client.listOrgUsers();
    expect(server.requests[0]?.headers.authorization).toBe('Bearer quirk-token-456');
    expect(server.requests[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('wraps a single user object into an array', async () => {
    server.replyJson(200, { id: 'u1', username: 'solo', enabled: true });
    const response = await client.listOrgUsers();
    expect(response.result).toEqual([{ id: 'u1', username: 'solo', enabled: true }]);
    expect(response.requestId).toBeUndefined();
    expect(response.message).toBeUndefined();
  });

  it('keeps an array of users as it is', async () => {
    server.replyJson(200, [{ id: 'u1' }, { id: 'u2' }]);
    expect((await client.listOrgUsers()).result).toHaveLength(2);
  });

  it('fails before any request when no bearer token is configured', async () => {
    const keyOnly = new ApiClient({ baseUrl: server.url, apiKey: 'quirk-key-123' });
    const error = await keyOnly.listOrgUsers().catch((e: unknown) => e);
    await keyOnly.close();
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toMatch(/bearer token/);
    expect((error as ApiError).retryable).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it('reports an error envelope from /users as an ApiError', async () => {
    server.replyJson(401, {
      Error: true,
      ErrorDetails: [{ Type: 'Unauthorized', Reason: 'bad token' }],
      RequestID: 'u-401',
    });
    const error = (await client.listOrgUsers().catch((e: unknown) => e)) as ApiError;
    expect(error.type).toBe('Unauthorized');
    expect(error.requestId).toBe('u-401');
  });
});

describe('paths and base URLs', () => {
  it('URL-encodes every path parameter', async () => {
    server.replyJson(200, ok('ok'));
    await client.pauseWorkspace('wg/1 a', 'ws?x=1#y');
    expect(server.requests[0]?.url).toBe(
      '/controller/v4/v2/workgroups/wg%2F1%20a/workspaces/ws%3Fx%3D1%23y/pause',
    );
  });

  it('works with a trailing slash on the base URL', async () => {
    const slashed = new ApiClient({ baseUrl: `${server.url}///`, apiKey: 'k' });
    server.replyJson(200, ok([]));
    await slashed.listWorkgroups();
    await slashed.close();
    expect(server.requests[0]?.url).toBe('/controller/v4/v2/workgroups');
  });

  it('works under a base URL with a path prefix', async () => {
    const prefixed = new ApiClient({ baseUrl: `${server.url}/api/`, apiKey: 'k' });
    server.replyJson(200, ok([]));
    await prefixed.listWorkgroups();
    await prefixed.close();
    expect(server.requests[0]?.url).toBe('/api/controller/v4/v2/workgroups');
  });
});

describe('tolerant parsing', () => {
  it('keeps fields the spec does not document', async () => {
    server.replyJson(
      200,
      ok([{ workgroup_id: 'wg1', brand_new_field: { nested: 1 }, workspaces: [{ x_extra: true }] }]),
    );
    const { result } = await client.listWorkgroups();
    expect(result[0]).toMatchObject({ brand_new_field: { nested: 1 }, workspaces: [{ x_extra: true }] });
  });

  it('accepts null for documented optional fields', async () => {
    server.replyJson(200, ok([{ workgroup_id: 'wg1', region: null, workspaces: null }]));
    const { result } = await client.listWorkgroups();
    expect(result[0]?.region).toBeNull();
  });

  it('reads a null list result as an empty list', async () => {
    server.replyJson(200, ok(null));
    expect((await client.listWorkgroups()).result).toEqual([]);
    server.replyJson(200, ok(null));
    expect((await client.listAllowedIps('wg')).result).toEqual([]);
  });

  it('rejects an allow-list entry without its required cidr, naming the place', async () => {
    server.replyJson(200, ok([{ cidr: '10.0.0.1/32' }, { note: 'no cidr' }]));
    const error = (await client.listAllowedIps('wg').catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain('Result.1.cidr');
  });
});
