import { describe, expect, it } from 'vitest';
import { backupOf, call, paths, startSim, workspaceWithStatus } from './harness.js';

function expectError(
  res: { status: number; json: { Error: boolean; ErrorDetails: { FieldName: string; Type: string }[] } },
  status: number,
  type: string,
  fieldName: string,
) {
  expect(res.status).toBe(status);
  expect(res.json.Error).toBe(true);
  expect(res.json.ErrorDetails).toHaveLength(1);
  expect(res.json.ErrorDetails[0]).toMatchObject({ Type: type, FieldName: fieldName });
}

describe('validation errors: 400 Bad-Request naming the field', () => {
  it('answers 400 Bad-Request naming backup_id when the restore body has none', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'POST', paths.restore(ws.workgroup_id, ws.workspace_id), { body: {} });
    expectError(res, 400, 'Bad-Request', 'backup_id');
    expect(res.json.ErrorDetails[0].Reason).toBe('backup_id is required');
  });

  it('answers 400 Bad-Request naming backup_id when the restore has no body at all', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'POST', paths.restore(ws.workgroup_id, ws.workspace_id));
    expectError(res, 400, 'Bad-Request', 'backup_id');
  });

  it('answers 400 Bad-Request naming backup_id when the delete-backup body has none', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'DELETE', paths.backups(ws.workgroup_id, ws.workspace_id), { body: {} });
    expectError(res, 400, 'Bad-Request', 'backup_id');
  });

  it('answers 400 Bad-Request naming password when it is shorter than 8 characters, without echoing it', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'POST', paths.dbUser(ws.workgroup_id, ws.workspace_id), {
      body: { username: 'newbie', password: 'hunter2' },
    });
    expectError(res, 400, 'Bad-Request', 'password');
    expect(res.text).not.toContain('hunter2');
  });

  it('answers 400 Bad-Request naming password when a password update is too short', async () => {
    const sim = await startSim();
    const user = sim.state.dbUsers[0];
    if (!user) throw new Error('no db user seeded');
    const res = await call(sim, 'PUT', paths.dbUser(user.workgroup_id, user.workspace_id), {
      body: { username: user.username, password: 'short' },
    });
    expectError(res, 400, 'Bad-Request', 'password');
  });

  it('answers 400 Bad-Request naming username when it is missing', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'POST', paths.dbUser(ws.workgroup_id, ws.workspace_id), {
      body: { password: 'long-enough-password' },
    });
    expectError(res, 400, 'Bad-Request', 'username');
  });

  it('answers 400 Bad-Request naming username when the user already exists in the workspace', async () => {
    const sim = await startSim();
    const user = sim.state.dbUsers[0];
    if (!user) throw new Error('no db user seeded');
    const res = await call(sim, 'POST', paths.dbUser(user.workgroup_id, user.workspace_id), {
      body: { username: user.username, password: 'long-enough-password' },
    });
    expectError(res, 400, 'Bad-Request', 'username');
    expect(res.json.ErrorDetails[0].Reason).toContain('already exists');
  });

  it('answers 400 Bad-Request naming cluster_enabled_log_types for an unknown log type', async () => {
    const sim = await startSim();
    const cp = sim.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider seeded');
    const res = await call(sim, 'PUT', paths.upgrade(cp.id), {
      body: { cluster_enabled_log_types: ['api', 'kernel'] },
    });
    expectError(res, 400, 'Bad-Request', 'cluster_enabled_log_types');
    expect(res.json.ErrorDetails[0].Reason).toContain('"kernel"');
    expect(sim.state.cloudProviders[0]?.status).toBe('Active');
  });

  it('answers 400 Bad-Request naming the node group when an upgrade would set min_size above max_size', async () => {
    const sim = await startSim();
    const cp = sim.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider seeded');
    const res = await call(sim, 'PUT', paths.upgrade(cp.id), {
      body: { node_group_config: { ng_16: { min_size: 50, max_size: 10 } } },
    });
    expectError(res, 400, 'Bad-Request', 'node_group_config.ng_16.min_size');
  });

  it('answers 400 Bad-Request naming the member of a component that has no version', async () => {
    const sim = await startSim();
    const cp = sim.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider seeded');
    const res = await call(sim, 'PUT', paths.upgrade(cp.id), { body: { components: [{ name: 'engine' }] } });
    expectError(res, 400, 'Bad-Request', 'components.version');
  });

  it('answers 400 Bad-Request naming name when a cloud provider rename is empty', async () => {
    const sim = await startSim();
    const cp = sim.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider seeded');
    const res = await call(sim, 'PUT', paths.cloudProvider(cp.id), { body: { name: '' } });
    expectError(res, 400, 'Bad-Request', 'name');
  });

  it('treats an empty JSON body as no body, and answers 400 Bad-Request naming body when the JSON does not parse', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'POST', paths.restore(ws.workgroup_id, ws.workspace_id), {
      headers: { 'content-type': 'application/json' },
      body: undefined,
    });
    expectError(res, 400, 'Bad-Request', 'backup_id');
    const broken = await fetch(`${sim.url}${paths.restore(ws.workgroup_id, ws.workspace_id)}`, {
      method: 'POST',
      headers: { 'x-api-key': 'test-api-key', 'content-type': 'application/json' },
      body: '{"backup_id":',
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ ErrorDetails: [{ Type: 'Bad-Request', FieldName: 'body' }] });
  });

  it('answers 400 Bad-Request when an upgrade is asked of a provider already Upgrading', async () => {
    const sim = await startSim({ transitionMs: 5_000 });
    const cp = sim.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider seeded');
    expect((await call(sim, 'PUT', paths.upgrade(cp.id), { body: {} })).status).toBe(200);
    const again = await call(sim, 'PUT', paths.upgrade(cp.id), { body: {} });
    expectError(again, 400, 'Bad-Request', 'cloudProviderID');
  });
});

describe('state errors', () => {
  it('answers 400 Bad-Request when pausing a workspace that is not Active', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Stopped');
    const res = await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id));
    expectError(res, 400, 'Bad-Request', 'workspaceID');
    expect(res.json.ErrorDetails[0].Reason).toContain('Stopped');
  });

  it('answers 400 Bad-Request when resuming a workspace that is not Stopped', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'POST', paths.resume(ws.workgroup_id, ws.workspace_id));
    expectError(res, 400, 'Bad-Request', 'workspaceID');
  });

  it('answers 400 Bad-Request when restoring a workspace that is mid-transition', async () => {
    const sim = await startSim({ transitionMs: 5_000 });
    const ws = workspaceWithStatus(sim.state, 'Active');
    await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id));
    const res = await call(sim, 'POST', paths.restore(ws.workgroup_id, ws.workspace_id), {
      body: { backup_id: backupOf(sim.state, ws.workspace_id).backup_id },
    });
    expectError(res, 400, 'Bad-Request', 'workspaceID');
  });

  it('refuses with 400 Bad-Request to delete a database that still has workspaces', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'DELETE', paths.database(ws.workgroup_id, ws.database_id));
    expectError(res, 400, 'Bad-Request', 'databaseID');
    expect(res.json.ErrorDetails[0].Reason).toContain(ws.workspace_id);
    expect(sim.state.databases.some((db) => db.database_id === ws.database_id)).toBe(true);
  });
});

describe('unknown ids: 404 Not-Found naming the parameter', () => {
  it.each([
    ['workgroupID', 'listAllowedIps', 'GET', (wg: string, _ws: string) => paths.allowList(`${wg}x`)],
    ['workgroupID', 'checkCurrentIp', 'GET', (wg: string, _ws: string) => paths.currentIp(`${wg}x`)],
    ['workgroupID', 'disableAllowList', 'PUT', (wg: string, _ws: string) => paths.disableAllowList(`${wg}x`)],
    ['workspaceID', 'pauseWorkspace', 'POST', (wg: string, ws: string) => paths.pause(wg, `${ws}x`)],
    ['workspaceID', 'resumeWorkspace', 'POST', (wg: string, ws: string) => paths.resume(wg, `${ws}x`)],
    ['databaseID', 'deleteDatabase', 'DELETE', (wg: string, _ws: string) => paths.database(wg, 'db-missing')],
  ] as const)('answers 404 Not-Found naming %s in %s', async (field, _operation, method, path) => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, method, path(ws.workgroup_id, ws.workspace_id));
    expectError(res, 404, 'Not-Found', field);
  });

  it('answers 404 Not-Found naming workspaceID when the workspace belongs to another workgroup', async () => {
    const sim = await startSim();
    const [a, b] = sim.state.workgroups;
    const ws = sim.state.workspaces.find((candidate) => candidate.workgroup_id === b?.workgroup_id);
    if (!a || !ws) throw new Error('need two workgroups');
    const res = await call(sim, 'POST', paths.pause(a.workgroup_id, ws.workspace_id));
    expectError(res, 404, 'Not-Found', 'workspaceID');
  });

  it('answers 404 Not-Found naming cloudProviderID for get, update and upgrade', async () => {
    const sim = await startSim();
    for (const [method, path, body] of [
      ['GET', paths.cloudProvider('cp-missing'), undefined],
      ['PUT', paths.cloudProvider('cp-missing'), { name: 'x' }],
      ['PUT', paths.upgrade('cp-missing'), {}],
    ] as const) {
      expectError(await call(sim, method, path, { body }), 404, 'Not-Found', 'cloudProviderID');
    }
  });

  it('answers 404 Not-Found naming backup_id for a backup of another workspace', async () => {
    const sim = await startSim();
    const [ws, other] = sim.state.workspaces.filter((candidate) => candidate.status === 'Active');
    if (!ws || !other) throw new Error('need two active workspaces');
    const foreign = backupOf(sim.state, other.workspace_id);
    for (const [method, path] of [
      ['POST', paths.restore(ws.workgroup_id, ws.workspace_id)],
      ['DELETE', paths.backups(ws.workgroup_id, ws.workspace_id)],
    ] as const) {
      const res = await call(sim, method, path, { body: { backup_id: foreign.backup_id } });
      expectError(res, 404, 'Not-Found', 'backup_id');
    }
  });

  it('answers 404 Not-Found naming username when updating the password of an unknown user', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'PUT', paths.dbUser(ws.workgroup_id, ws.workspace_id), {
      body: { username: 'nobody_here', password: 'long-enough-password' },
    });
    expectError(res, 404, 'Not-Found', 'username');
  });

  it('answers 404 Not-Found naming path for a route the API does not have', async () => {
    const sim = await startSim();
    const res = await call(sim, 'GET', '/controller/v4/v2/nothing');
    expectError(res, 404, 'Not-Found', 'path');
  });
});
