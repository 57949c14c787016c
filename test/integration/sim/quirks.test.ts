import { describe, expect, it } from 'vitest';
import { OPERATION_ROUTES } from '../../../src/sim/index.js';
import { backupOf, call, emptyDatabase, paths, startSim, workspaceWithStatus } from './harness.js';

describe('quirks of the spec, as the wire shows them', () => {
  it('spells the IsAllowed key of check current IP with one leading space', async () => {
    const sim = await startSim();
    const wg = sim.state.workgroups[0];
    if (!wg) throw new Error('no workgroup seeded');
    const res = await call(sim, 'GET', paths.currentIp(wg.workgroup_id));
    expect(Object.keys(res.json.Result).sort()).toEqual([' IsAllowed', 'CurrentIP']);
    expect(res.text).toContain('" IsAllowed":');
  });

  it('answers a plain string Result on every "declared object" operation', async () => {
    const sim = await startSim();
    const [ws, stopped] = [
      workspaceWithStatus(sim.state, 'Active'),
      workspaceWithStatus(sim.state, 'Stopped'),
    ];
    const user = sim.state.dbUsers[0];
    const cp = sim.state.cloudProviders[0];
    const db = emptyDatabase(sim.state);
    if (!user || !cp) throw new Error('seed incomplete');
    const responses = [
      await call(sim, 'DELETE', paths.backups(ws.workgroup_id, ws.workspace_id), {
        body: { backup_id: backupOf(sim.state, ws.workspace_id).backup_id },
      }),
      await call(sim, 'PUT', paths.dbUser(user.workgroup_id, user.workspace_id), {
        body: { username: user.username, password: 'another-password' },
      }),
      await call(sim, 'PUT', paths.upgrade(cp.id), { body: {} }),
      await call(sim, 'POST', paths.resume(stopped.workgroup_id, stopped.workspace_id)),
      await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id)),
      await call(sim, 'DELETE', paths.database(db.workgroup_id, db.database_id)),
    ];
    for (const res of responses) {
      expect(res.status).toBe(200);
      expect(typeof res.json.Result).toBe('string');
    }
  });

  it('answers create-db-user with metadata as a string, as in the spec sample', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'POST', paths.dbUser(ws.workgroup_id, ws.workspace_id), {
      body: { username: 'quirky', password: 'long-enough-password' },
    });
    expect(typeof res.json.Result.metadata).toBe('string');
    expect(JSON.parse(res.json.Result.metadata)).toEqual(expect.any(Object));
    expect(res.json.Result).not.toHaveProperty('password');
  });

  it('answers /users without the envelope', async () => {
    const sim = await startSim();
    const res = await call(sim, 'GET', paths.users(), { auth: 'bearer' });
    expect(Array.isArray(res.json)).toBe(true);
    expect(res.json[0]).not.toHaveProperty('Error');
    expect(res.json[0]).not.toHaveProperty('RequestID');
  });

  it('answers /users as one object when configured so, and under auto when there is exactly one user', async () => {
    const asObject = await startSim({ orgUsersShape: 'object' });
    const res = await call(asObject, 'GET', paths.users(), { auth: 'bearer' });
    expect(Array.isArray(res.json)).toBe(false);
    expect(res.json.id).toBe(asObject.state.orgUsers[0]?.id);

    const state = structuredClone(asObject.state);
    state.orgUsers = state.orgUsers.slice(0, 1);
    state.settings.org_users_shape = 'auto';
    const single = await startSim({ state });
    expect(Array.isArray((await call(single, 'GET', paths.users(), { auth: 'bearer' })).json)).toBe(false);
    single.reset({ state: { ...state, settings: { org_users_shape: 'array' } } });
    expect((await call(single, 'GET', paths.users(), { auth: 'bearer' })).json).toHaveLength(1);
  });

  it('leaves Result out of error bodies', async () => {
    const sim = await startSim();
    const res = await call(sim, 'GET', paths.allowList('wg-nope'));
    expect(res.status).toBe(404);
    expect(res.json).not.toHaveProperty('Result');
    expect(Object.keys(res.json).sort()).toEqual(['Error', 'ErrorDetails', 'Message', 'RequestID']);
  });

  it('gives every response a unique RequestID, in the envelope and the X-Request-ID header', async () => {
    const sim = await startSim();
    const wg = sim.state.workgroups[0];
    if (!wg) throw new Error('no workgroup seeded');
    const responses = await Promise.all([
      ...Array.from({ length: 20 }, () => call(sim, 'GET', paths.allowList(wg.workgroup_id))),
      call(sim, 'GET', paths.allowList('wg-nope')),
      call(sim, 'GET', paths.allowList(wg.workgroup_id), { auth: 'none' }),
      call(sim, 'GET', paths.users(), { auth: 'bearer' }),
    ]);
    const ids = responses.map((res) => res.headers['x-request-id']);
    expect(new Set(ids).size).toBe(responses.length);
    for (const res of responses.slice(0, -1)) expect(res.json.RequestID).toBe(res.headers['x-request-id']);
  });

  it('serves each operation at the spec path and method and nowhere else', async () => {
    const sim = await startSim();
    expect(OPERATION_ROUTES).toHaveLength(15);
    const res = await call(sim, 'GET', paths.pause('wg-x', 'ws-x'));
    expect(res.status).toBe(404);
  });
});
