import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, ApiError } from '../../../src/api/index.js';
import {
  API_KEY,
  BEARER_TOKEN,
  backupOf,
  emptyDatabase,
  eventually,
  startSim,
  workspaceWithStatus,
} from './harness.js';

type Sim = Awaited<ReturnType<typeof startSim>>;

const clients: ApiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function clientFor(sim: Sim, options: { timeoutMs?: number; apiKey?: string } = {}) {
  const client = new ApiClient({ baseUrl: sim.url, apiKey: API_KEY, bearerToken: BEARER_TOKEN, ...options });
  clients.push(client);
  return client;
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('the call succeeded');
}

async function listedWorkspace(client: ApiClient, workspaceId: string) {
  const { result } = await client.listWorkgroups();
  return result.flatMap((wg) => wg.workspaces ?? []).find((ws) => ws.workspace_id === workspaceId);
}

describe('ApiClient against the simulator', () => {
  it('round-trips the backup operations: restore to the backup counts, then delete', async () => {
    const sim = await startSim();
    const client = clientFor(sim);
    const ws = workspaceWithStatus(sim.state, 'Active');
    const backup = backupOf(sim.state, ws.workspace_id);
    const restored = await client.restoreBackup(ws.workgroup_id, ws.workspace_id, backup.backup_id);
    expect(typeof restored.result).toBe('string');
    expect(restored.requestId).toEqual(expect.any(String));
    const after = await eventually('the restored workspace Active', async () => {
      const listed = await listedWorkspace(client, ws.workspace_id);
      return listed?.status === 'Active' ? listed : undefined;
    });
    expect(after).toMatchObject({ vertex_count: backup.vertex_count, edge_count: backup.edge_count });
    const deleted = await client.deleteBackup(ws.workgroup_id, ws.workspace_id, backup.backup_id);
    expect(typeof deleted.result).toBe('string');
    const again = await rejection(client.deleteBackup(ws.workgroup_id, ws.workspace_id, backup.backup_id));
    expect(again).toMatchObject({ status: 404, type: 'Not-Found', retryable: false });
  });

  it('round-trips the in-database user operations', async () => {
    const sim = await startSim();
    const client = clientFor(sim);
    const ws = workspaceWithStatus(sim.state, 'Active');
    const created = await client.createDbUser(ws.workgroup_id, ws.workspace_id, {
      username: 'roundtrip',
      password: 'round-trip-pass',
    });
    expect(created.result).toMatchObject({ username: 'roundtrip', enabled: true });
    expect(typeof created.result.metadata).toBe('string');
    const updated = await client.updateDbUserPassword(ws.workgroup_id, ws.workspace_id, {
      username: 'roundtrip',
      password: 'another-pass-1',
    });
    expect(typeof updated.result).toBe('string');
    const duplicate = await rejection(
      client.createDbUser(ws.workgroup_id, ws.workspace_id, {
        username: 'roundtrip',
        password: 'round-trip-pass',
      }),
    );
    expect(duplicate).toMatchObject({ status: 400, type: 'Bad-Request', retryable: false });
    expect(duplicate.details[0]?.FieldName).toBe('username');
    const short = await rejection(
      client.createDbUser(ws.workgroup_id, ws.workspace_id, { username: 'x', password: 'short' }),
    );
    expect(short.details[0]?.FieldName).toBe('password');
  });

  it('round-trips the cloud provider operations, the upgrade visible once it completes', async () => {
    const sim = await startSim();
    const client = clientFor(sim);
    const cpId = sim.state.cloudProviders[0]?.id ?? '';
    const got = await client.getCloudProvider(cpId);
    expect(got.result.id).toBe(cpId);
    const renamed = await client.updateCloudProvider(cpId, { name: 'renamed-byoc' });
    expect(renamed.result.name).toBe('renamed-byoc');
    const upgrading = await client.upgradeCloudProvider(cpId, {
      components: [{ name: 'engine', version: '6.0.0' }],
      node_group_config: { ng_48: { max_size: 7 } },
      cluster_enabled_log_types: ['audit'],
    });
    expect(typeof upgrading.result).toBe('string');
    expect((await client.getCloudProvider(cpId)).result.status).toBe('Upgrading');
    const done = await eventually('the upgraded cloud provider Active', async () => {
      const { result } = await client.getCloudProvider(cpId);
      return result.status === 'Active' ? result : undefined;
    });
    expect(JSON.parse(done.component_versions ?? '{}').engine).toBe('6.0.0');
    expect(done.node_group_config?.ng_48?.max_size).toBe(7);
    const badLog = await rejection(
      client.upgradeCloudProvider(cpId, { cluster_enabled_log_types: ['kernel'] }),
    );
    expect(badLog.details[0]?.FieldName).toBe('cluster_enabled_log_types');
  });

  it('round-trips the workgroup and allow-list operations', async () => {
    const sim = await startSim();
    const client = clientFor(sim);
    const listed = await client.listWorkgroups();
    expect(listed.result).toHaveLength(sim.state.workgroups.length);
    const wg = sim.state.workgroups[0];
    if (!wg) throw new Error('no workgroup seeded');
    const allowed = await client.listAllowedIps(wg.workgroup_id);
    expect(allowed.result.map((entry) => entry.cidr)).toContain('127.0.0.1/32');
    const current = await client.checkCurrentIp(wg.workgroup_id);
    expect(current.result).toEqual({ isAllowed: true, currentIp: '127.0.0.1' });
    const disabled = await client.disableAllowList(wg.workgroup_id);
    expect(typeof disabled.result).toBe('string');
    const after = await client.listWorkgroups();
    expect(after.result.find((w) => w.workgroup_id === wg.workgroup_id)?.enable_allow_list).toBe(false);
  });

  it('round-trips list org users as an array, and as one object wrapped in an array', async () => {
    const asArray = await startSim();
    const users = await clientFor(asArray).listOrgUsers();
    expect(users.result.length).toBe(asArray.state.orgUsers.length);
    expect(users.requestId).toBeUndefined();
    const asObject = await startSim({ orgUsersShape: 'object' });
    const one = await clientFor(asObject).listOrgUsers();
    expect(one.result).toHaveLength(1);
    expect(one.result[0]?.id).toBe(asObject.state.orgUsers[0]?.id);
  });

  it('round-trips pause and resume through their transitions, and a database deletion', async () => {
    const sim = await startSim();
    const client = clientFor(sim);
    const ws = workspaceWithStatus(sim.state, 'Active');
    await client.pauseWorkspace(ws.workgroup_id, ws.workspace_id);
    const notActive = await rejection(client.pauseWorkspace(ws.workgroup_id, ws.workspace_id));
    expect(notActive).toMatchObject({ status: 400, type: 'Bad-Request', retryable: false });
    await eventually('the paused workspace Stopped', async () =>
      (await listedWorkspace(client, ws.workspace_id))?.status === 'Stopped' ? true : undefined,
    );
    await client.resumeWorkspace(ws.workgroup_id, ws.workspace_id);
    await eventually('the resumed workspace Active', async () =>
      (await listedWorkspace(client, ws.workspace_id))?.status === 'Active' ? true : undefined,
    );
    const db = emptyDatabase(sim.state);
    expect(typeof (await client.deleteDatabase(db.workgroup_id, db.database_id)).result).toBe('string');
    const inUse = await rejection(client.deleteDatabase(ws.workgroup_id, ws.database_id));
    expect(inUse.details[0]?.FieldName).toBe('databaseID');
  });

  it('surfaces a wrong API key as a permanent Unauthorized ApiError', async () => {
    const sim = await startSim();
    const error = await rejection(clientFor(sim, { apiKey: 'wrong-key' }).listWorkgroups());
    expect(error).toMatchObject({ status: 401, type: 'Unauthorized', retryable: false });
    expect(error.requestId).toEqual(expect.any(String));
  });

  it('surfaces injected faults as the ApiErrors a worker retries', async () => {
    const sim = await startSim({ faults: { errorRate: 1 } });
    const client = clientFor(sim, { timeoutMs: 300 });
    const internal = await rejection(client.listWorkgroups());
    expect(internal).toMatchObject({ status: 500, type: 'Internal-Error', retryable: true });

    sim.setFaults({ throttleRps: 1 });
    await client.listWorkgroups();
    const throttled = await rejection(client.listWorkgroups());
    expect(throttled).toMatchObject({
      status: 429,
      type: 'Quota-Exceed',
      retryable: true,
      retryAfterMs: 1000,
    });

    sim.setFaults({ dropRate: 1 });
    expect(await rejection(client.listWorkgroups())).toMatchObject({ type: 'Network', retryable: true });

    sim.setFaults({ hangRate: 1 });
    expect(await rejection(client.listWorkgroups())).toMatchObject({ type: 'Timeout', retryable: true });
  });
});
