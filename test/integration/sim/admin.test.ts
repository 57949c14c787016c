import { describe, expect, it } from 'vitest';
import { SimStateSchema } from '../../../src/sim/index.js';
import { BEARER_TOKEN, call, paths, startSim, workspaceWithStatus } from './harness.js';

describe('admin API under /_sim/', () => {
  it('returns the whole state from GET /_sim/state, backups with their counts and db users without passwords', async () => {
    const sim = await startSim();
    const res = await call(sim, 'GET', '/_sim/state', { auth: 'none' });
    expect(res.status).toBe(200);
    const state = SimStateSchema.parse(res.json);
    expect(state.backups.length).toBe(state.workspaces.length * 2);
    expect(state.backups[0]).toMatchObject({
      backup_id: expect.stringMatching(/^bk-/),
      vertex_count: expect.any(Number),
      edge_count: expect.any(Number),
    });
    expect(state.dbUsers[0]).toMatchObject({ password_version: 1, password_set_at: expect.any(String) });
    expect(res.text).not.toMatch(/"password"/);
    expect(state.orgUsers.length).toBeGreaterThan(0);
    expect(state.cloudProviders.length).toBe(state.workgroups.length);
  });

  it('reflects changes made through the API in GET /_sim/state', async () => {
    const sim = await startSim();
    const wg = sim.state.workgroups.find((candidate) => candidate.enable_allow_list);
    if (!wg) throw new Error('no enforced allow list seeded');
    await call(sim, 'GET', '/_sim/state');
    await call(sim, 'PUT', paths.disableAllowList(wg.workgroup_id));
    const after = (await call(sim, 'GET', '/_sim/state')).json;
    expect(
      after.workgroups.find((w: { workgroup_id: string }) => w.workgroup_id === wg.workgroup_id)
        .enable_allow_list,
    ).toBe(false);
  });

  it('logs method, path, status, requestId and which auth header was present, never its value', async () => {
    const sim = await startSim();
    const wg = sim.state.workgroups[0];
    if (!wg) throw new Error('no workgroup seeded');
    const ok = await call(sim, 'GET', `${paths.allowList(wg.workgroup_id)}?verbose=1`);
    await call(sim, 'GET', paths.users(), { auth: 'bearer' });
    await call(sim, 'GET', paths.workgroups(), { auth: 'none' });
    const log = await call(sim, 'GET', '/_sim/requests');
    expect(log.json).toEqual([
      expect.objectContaining({
        seq: 1,
        method: 'GET',
        path: paths.allowList(wg.workgroup_id),
        operation: 'listAllowedIps',
        status: 200,
        requestId: ok.json.RequestID,
        auth: 'x-api-key',
        fault: null,
      }),
      expect.objectContaining({ seq: 2, operation: 'listOrgUsers', status: 200, auth: 'authorization' }),
      expect.objectContaining({ seq: 3, operation: 'listWorkgroups', status: 401, auth: 'none' }),
    ]);
    expect(log.text).not.toContain('test-api-key');
    expect(log.text).not.toContain(BEARER_TOKEN);
  });

  it('returns only newer entries from GET /_sim/requests?since=N', async () => {
    const sim = await startSim();
    for (let i = 0; i < 3; i++) await call(sim, 'GET', paths.workgroups());
    const res = await call(sim, 'GET', '/_sim/requests?since=2');
    expect(res.json.map((entry: { seq: number }) => entry.seq)).toEqual([3]);
    expect((await call(sim, 'GET', '/_sim/requests?since=x')).status).toBe(400);
  });

  it('returns the active faults from GET /_sim/faults', async () => {
    const sim = await startSim({ faults: { latencyMs: 1, seed: 9 } });
    const res = await call(sim, 'GET', '/_sim/faults');
    expect(res.json).toMatchObject({ latencyMs: 1, seed: 9, errorRate: 0 });
  });

  it('puts the starting state back, clears the log and the faults on POST /_sim/reset', async () => {
    const sim = await startSim({ faults: { latencyMs: 1 } });
    const before = JSON.stringify(sim.state);
    const ws = workspaceWithStatus(sim.state, 'Active');
    await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id));
    await call(sim, 'PUT', '/_sim/faults', { body: { errorRate: 1 } });
    const res = await call(sim, 'POST', '/_sim/reset');
    expect(res.status).toBe(200);
    expect(JSON.stringify(sim.state)).toBe(before);
    expect((await call(sim, 'GET', '/_sim/requests')).json).toEqual([]);
    expect((await call(sim, 'GET', '/_sim/faults')).json).toMatchObject({ latencyMs: 1, errorRate: 0 });
  });

  it('reseeds on POST /_sim/reset with a seed and a fleet', async () => {
    const sim = await startSim();
    const res = await call(sim, 'POST', '/_sim/reset', { body: { seed: 5, fleet: '2x6' } });
    expect(res.json).toEqual({ reset: true, workgroups: 2, workspaces: 12 });
    const bad = await call(sim, 'POST', '/_sim/reset', { body: { fleet: '3by4' } });
    expect(bad.status).toBe(400);
    expect(bad.json.ErrorDetails[0]).toMatchObject({ FieldName: 'fleet' });
  });

  it('loads a given state on POST /_sim/reset, and refuses an invalid one naming the path', async () => {
    const sim = await startSim();
    const state = structuredClone(sim.state);
    state.workgroups = state.workgroups.slice(0, 1);
    state.cloudProviders = state.cloudProviders.filter(
      (cp) => cp.id === state.workgroups[0]?.cloud_provider_id,
    );
    const keep = new Set(state.workgroups.map((wg) => wg.workgroup_id));
    state.databases = state.databases.filter((db) => keep.has(db.workgroup_id));
    state.workspaces = state.workspaces.filter((ws) => keep.has(ws.workgroup_id));
    state.backups = state.backups.filter((b) => keep.has(b.workgroup_id));
    state.dbUsers = state.dbUsers.filter((u) => keep.has(u.workgroup_id));
    expect((await call(sim, 'POST', '/_sim/reset', { body: { state } })).json.workgroups).toBe(1);

    const broken = structuredClone(state);
    (broken.workspaces[0] as { database_id: string }).database_id = 'db-gone';
    const res = await call(sim, 'POST', '/_sim/reset', { body: { state: broken } });
    expect(res.status).toBe(400);
    expect(res.json.ErrorDetails[0].FieldName).toBe('state');
    expect(res.json.ErrorDetails[0].Reason).toContain('workspaces[0].database_id');
  });

  it('round-trips: the output of GET /_sim/state starts an identical simulator', async () => {
    const first = await startSim({ seed: 77, fleet: { workgroups: 5, workspacesPerWorkgroup: 2 } });
    const saved = (await call(first, 'GET', '/_sim/state')).text;
    const second = await startSim({ state: JSON.parse(saved) });
    expect((await call(second, 'GET', '/_sim/state')).json).toEqual(JSON.parse(saved));
    expect((await call(second, 'GET', paths.workgroups())).json.Result).toEqual(
      (await call(first, 'GET', paths.workgroups())).json.Result,
    );
  });

  it('serves no /_sim/ routes when the admin API is off', async () => {
    const sim = await startSim({ admin: false });
    expect((await call(sim, 'GET', '/_sim/state')).status).toBe(404);
    expect((await call(sim, 'POST', '/_sim/reset')).status).toBe(404);
  });
});

describe('current IP against CIDRs', () => {
  it('checks an IPv6 caller against the IPv6 ranges when the proxy header is trusted', async () => {
    const sim = await startSim({ trustProxy: true });
    const wg = sim.state.workgroups[0];
    if (!wg) throw new Error('no workgroup seeded');
    wg.enable_allow_list = true;
    wg.allow_list = [
      { id: 'al-1', cidr: '2001:db8:abcd::/48', note: 'v6' },
      { id: 'al-2', cidr: '203.0.113.7/32', note: 'v4' },
    ];
    sim.reset({ state: sim.state });
    const check = async (ip: string) =>
      (await call(sim, 'GET', paths.currentIp(wg.workgroup_id), { headers: { 'x-forwarded-for': ip } })).json
        .Result;
    expect(await check('2001:db8:abcd:12::1')).toEqual({
      ' IsAllowed': true,
      CurrentIP: '2001:db8:abcd:12::1',
    });
    expect(await check('2001:db8:abce::1')).toEqual({ ' IsAllowed': false, CurrentIP: '2001:db8:abce::1' });
    expect(await check('203.0.113.7')).toEqual({ ' IsAllowed': true, CurrentIP: '203.0.113.7' });
    expect(await check('::ffff:203.0.113.7')).toEqual({ ' IsAllowed': true, CurrentIP: '203.0.113.7' });
    expect(await check('203.0.113.8')).toEqual({ ' IsAllowed': false, CurrentIP: '203.0.113.8' });
    const listed = await call(sim, 'GET', paths.workgroups(), {
      headers: { 'x-forwarded-for': '203.0.113.8' },
    });
    expect(listed.json.Result[0].is_current_ip_allowed).toBe(false);
  });

  it('allows every caller once the allow list is disabled', async () => {
    const sim = await startSim();
    const wg = sim.state.workgroups[0];
    if (!wg) throw new Error('no workgroup seeded');
    const state = structuredClone(sim.state);
    Object.assign(state.workgroups[0] ?? {}, {
      enable_allow_list: true,
      allow_list: [{ id: 'al-1', cidr: '10.0.0.0/8', note: 'vpc' }],
    });
    sim.reset({ state });
    expect((await call(sim, 'GET', paths.currentIp(wg.workgroup_id))).json.Result[' IsAllowed']).toBe(false);
    await call(sim, 'PUT', paths.disableAllowList(wg.workgroup_id));
    expect((await call(sim, 'GET', paths.currentIp(wg.workgroup_id))).json.Result[' IsAllowed']).toBe(true);
  });

  it('ignores X-Forwarded-For unless told to trust it', async () => {
    const sim = await startSim();
    const wg = sim.state.workgroups[0];
    if (!wg) throw new Error('no workgroup seeded');
    const res = await call(sim, 'GET', paths.currentIp(wg.workgroup_id), {
      headers: { 'x-forwarded-for': '2001:db8::1' },
    });
    expect(res.json.Result.CurrentIP).toBe('127.0.0.1');
  });
});
