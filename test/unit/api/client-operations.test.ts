import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ok, type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import { ApiClient } from '../../../src/api/index.js';

const API_KEY = 'test-key-0123456789';
const TOKEN = 'test-bearer-abcdef';

let server: ScriptedServer;
let client: ApiClient;

beforeAll(async () => {
  server = await startScriptedServer();
  client = new ApiClient({ baseUrl: server.url, apiKey: API_KEY, bearerToken: TOKEN });
});
afterAll(async () => {
  await client.close();
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

const V2 = '/controller/v4/v2';

interface OperationCase {
  name: string;
  call: (c: ApiClient) => Promise<{ result: unknown }>;
  method: string;
  path: string;
  body?: unknown;
  answer: unknown;
  expected: unknown;
}

const cases: OperationCase[] = [
  {
    name: 'restoreBackup',
    call: (c) => c.restoreBackup('wg1', 'ws1', 'bk1'),
    method: 'POST',
    path: `${V2}/workgroups/wg1/workspaces/ws1/backups/restore`,
    body: { backup_id: 'bk1' },
    answer: ok('restore started'),
    expected: 'restore started',
  },
  {
    name: 'deleteBackup',
    call: (c) => c.deleteBackup('wg1', 'ws1', 'bk1'),
    method: 'DELETE',
    path: `${V2}/workgroups/wg1/workspaces/ws1/backups`,
    body: { backup_id: 'bk1' },
    answer: ok('deleted'),
    expected: 'deleted',
  },
  {
    name: 'createDbUser',
    call: (c) => c.createDbUser('wg1', 'ws1', { username: 'app', password: 'sup3r-secret' }),
    method: 'POST',
    path: `${V2}/workgroups/wg1/workspaces/ws1/dbuser`,
    body: { username: 'app', password: 'sup3r-secret' },
    answer: ok({ id: 'u1', username: 'app', enabled: true, metadata: '{"team":"ops"}' }),
    expected: { id: 'u1', username: 'app', enabled: true, metadata: '{"team":"ops"}' },
  },
  {
    name: 'updateDbUserPassword',
    call: (c) => c.updateDbUserPassword('wg1', 'ws1', { username: 'app', password: 'n3w-secret!' }),
    method: 'PUT',
    path: `${V2}/workgroups/wg1/workspaces/ws1/dbuser`,
    body: { username: 'app', password: 'n3w-secret!' },
    answer: ok('password updated'),
    expected: 'password updated',
  },
  {
    name: 'updateCloudProvider',
    call: (c) => c.updateCloudProvider('cp1', { name: 'byoc-eu' }),
    method: 'PUT',
    path: `${V2}/cloud-providers/cp1`,
    body: { name: 'byoc-eu' },
    answer: ok({ id: 'cp1', name: 'byoc-eu', status: 'Active' }),
    expected: { id: 'cp1', name: 'byoc-eu', status: 'Active' },
  },
  {
    name: 'getCloudProvider',
    call: (c) => c.getCloudProvider('cp1'),
    method: 'GET',
    path: `${V2}/cloud-providers/cp1`,
    answer: ok({
      id: 'cp1',
      version: '1.4.0',
      node_group_config: { ng_16: { max_size: 4, min_size: 1 }, prefetch_image_list: ['img:1'] },
    }),
    expected: {
      id: 'cp1',
      version: '1.4.0',
      node_group_config: { ng_16: { max_size: 4, min_size: 1 }, prefetch_image_list: ['img:1'] },
    },
  },
  {
    name: 'upgradeCloudProvider',
    call: (c) =>
      c.upgradeCloudProvider('cp1', {
        cluster_enabled_log_types: ['api', 'audit'],
        components: [{ name: 'controller', version: '2.1.0' }],
        node_group_config: { ng_32: { max_size: 6 } },
      }),
    method: 'PUT',
    path: `${V2}/cloud-providers/cp1/upgrade`,
    body: {
      cluster_enabled_log_types: ['api', 'audit'],
      components: [{ name: 'controller', version: '2.1.0' }],
      node_group_config: { ng_32: { max_size: 6 } },
    },
    answer: ok('upgrade started'),
    expected: 'upgrade started',
  },
  {
    name: 'listWorkgroups',
    call: (c) => c.listWorkgroups(),
    method: 'GET',
    path: `${V2}/workgroups`,
    answer: ok([
      { workgroup_id: 'wg1', name: 'dev', workspaces: [{ workspace_id: 'ws1', status: 'Active' }] },
    ]),
    expected: [{ workgroup_id: 'wg1', name: 'dev', workspaces: [{ workspace_id: 'ws1', status: 'Active' }] }],
  },
  {
    name: 'listAllowedIps',
    call: (c) => c.listAllowedIps('wg1'),
    method: 'GET',
    path: `${V2}/workgroups/wg1/allow_list`,
    answer: ok([{ cidr: '10.0.0.0/8', id: 'a1', note: 'office' }]),
    expected: [{ cidr: '10.0.0.0/8', id: 'a1', note: 'office' }],
  },
  {
    name: 'checkCurrentIp',
    call: (c) => c.checkCurrentIp('wg1'),
    method: 'GET',
    path: `${V2}/workgroups/wg1/allow_list/current`,
    answer: ok({ ' IsAllowed': true, CurrentIP: '203.0.113.7' }),
    expected: { isAllowed: true, currentIp: '203.0.113.7' },
  },
  {
    name: 'disableAllowList',
    call: (c) => c.disableAllowList('wg1'),
    method: 'PUT',
    path: `${V2}/workgroups/wg1/allow_list/disable`,
    answer: ok('allow list disabled'),
    expected: 'allow list disabled',
  },
  {
    name: 'listOrgUsers',
    call: (c) => c.listOrgUsers(),
    method: 'GET',
    path: '/users',
    answer: [
      { id: 'u1', username: 'ana', roles: [{ name: 'admin' }], metadata: { lastLogin: '2026-11-01' } },
    ],
    expected: [
      { id: 'u1', username: 'ana', roles: [{ name: 'admin' }], metadata: { lastLogin: '2026-11-01' } },
    ],
  },
  {
    name: 'resumeWorkspace',
    call: (c) => c.resumeWorkspace('wg1', 'ws1'),
    method: 'POST',
    path: `${V2}/workgroups/wg1/workspaces/ws1/resume`,
    answer: ok('resuming'),
    expected: 'resuming',
  },
  {
    name: 'pauseWorkspace',
    call: (c) => c.pauseWorkspace('wg1', 'ws1'),
    method: 'POST',
    path: `${V2}/workgroups/wg1/workspaces/ws1/pause`,
    answer: ok('pausing'),
    expected: 'pausing',
  },
  {
    name: 'deleteDatabase',
    call: (c) => c.deleteDatabase('wg1', 'db1'),
    method: 'DELETE',
    path: `${V2}/workgroups/wg1/databases/db1`,
    answer: ok('deleted'),
    expected: 'deleted',
  },
];

describe('the client covers all 15 operations of the spec', () => {
  it('has exactly one case per operation', () => {
    expect(new Set(cases.map((c) => c.name)).size).toBe(15);
  });

  it.each(cases)('$name sends $method to its spec path with its body and parses the result', async (op) => {
    server.replyJson(200, op.answer);
    const response = await op.call(client);
    expect(response.result).toEqual(op.expected);
    const [sent] = server.requests;
    expect(sent?.method).toBe(op.method);
    expect(sent?.url).toBe(op.path);
    if (op.body === undefined) {
      expect(sent?.body).toBe('');
    } else {
      expect(sent?.headers['content-type']).toBe('application/json');
      expect(JSON.parse(sent?.body ?? '')).toEqual(op.body);
    }
  });

  it.each(cases.filter((c) => c.name !== 'listOrgUsers'))(
    '$name authenticates with x-api-key and no bearer token',
    async (op) => {
      server.replyJson(200, op.answer);
      await op.call(client);
      expect(server.requests[0]?.headers['x-api-key']).toBe(API_KEY);
      expect(server.requests[0]?.headers.authorization).toBeUndefined();
    },
  );

  it.each(cases.filter((c) => c.name !== 'listOrgUsers'))(
    '$name returns the envelope RequestID and Message',
    async (op) => {
      server.replyJson(200, { ...(op.answer as object), RequestID: 'rid-42', Message: 'done' });
      const response = (await op.call(client)) as { requestId?: string; message?: string };
      expect(response.requestId).toBe('rid-42');
      expect(response.message).toBe('done');
    },
  );
});
