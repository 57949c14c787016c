import { describe, expect, it } from 'vitest';
import {
  AllowListEntrySchema,
  CloudProviderSchema,
  CurrentIpSchema,
  DbUserSchema,
  EnvelopeSchema,
  OrgUserSchema,
  WorkgroupSchema,
} from '../../../src/api/schemas.js';
import { backupOf, call, emptyDatabase, paths, startSim, workspaceWithStatus } from './harness.js';

/** The happy path of each of the 15 operations, checked against the client's own schemas. */
describe('the 15 operations', () => {
  it('restores a backup (1) and answers a string Result', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const backup = backupOf(sim.state, ws.workspace_id);
    const res = await call(sim, 'POST', paths.restore(ws.workgroup_id, ws.workspace_id), {
      body: { backup_id: backup.backup_id },
    });
    expect(res.status).toBe(200);
    expect(EnvelopeSchema.parse(res.json)).toMatchObject({ Error: false, ErrorDetails: [] });
    expect(typeof res.json.Result).toBe('string');
  });

  it('deletes a backup (2), after which the state no longer holds it', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const backup = backupOf(sim.state, ws.workspace_id);
    const res = await call(sim, 'DELETE', paths.backups(ws.workgroup_id, ws.workspace_id), {
      body: { backup_id: backup.backup_id },
    });
    expect(res.status).toBe(200);
    expect(res.json.Error).toBe(false);
    expect(sim.state.backups.some((b) => b.backup_id === backup.backup_id)).toBe(false);
  });

  it('creates an in-database user (3) and answers the user object', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'POST', paths.dbUser(ws.workgroup_id, ws.workspace_id), {
      body: { username: 'report_bot', password: 'correct horse battery' },
    });
    expect(res.status).toBe(200);
    const user = DbUserSchema.parse(res.json.Result);
    expect(user).toMatchObject({ username: 'report_bot', enabled: true });
    expect(user.id).toMatch(/^dbu-/);
    expect(
      sim.state.dbUsers.some((u) => u.workspace_id === ws.workspace_id && u.username === 'report_bot'),
    ).toBe(true);
  });

  it("updates an in-database user's password (4) without keeping the password", async () => {
    const sim = await startSim();
    const user = sim.state.dbUsers[0];
    if (!user) throw new Error('no db user seeded');
    const res = await call(sim, 'PUT', paths.dbUser(user.workgroup_id, user.workspace_id), {
      body: { username: user.username, password: 'new-password-123' },
    });
    expect(res.status).toBe(200);
    expect(res.json.Error).toBe(false);
    const stored = sim.state.dbUsers.find((u) => u.id === user.id);
    expect(stored?.password_version).toBe(2);
    expect(JSON.stringify(sim.state)).not.toContain('new-password-123');
  });

  it('renames a cloud provider and records a version (5), changing nothing deployed', async () => {
    const sim = await startSim();
    const cp = sim.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider seeded');
    const before = {
      component_versions: cp.component_versions,
      node_group_config: structuredClone(cp.node_group_config),
    };
    const res = await call(sim, 'PUT', paths.cloudProvider(cp.id), {
      body: { name: 'renamed', version: '9.9.9' },
    });
    expect(res.status).toBe(200);
    const result = CloudProviderSchema.parse(res.json.Result);
    expect(result).toMatchObject({ id: cp.id, name: 'renamed', version: '9.9.9', ...before });
  });

  it('gets a cloud provider (6) with every documented field', async () => {
    const sim = await startSim();
    const cp = sim.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider seeded');
    const res = await call(sim, 'GET', paths.cloudProvider(cp.id));
    expect(res.status).toBe(200);
    const result = CloudProviderSchema.parse(res.json.Result);
    for (const field of Object.keys(CloudProviderSchema.shape)) expect(result).toHaveProperty(field);
  });

  it('starts a cloud provider upgrade (7) and answers a string Result', async () => {
    const sim = await startSim();
    const cp = sim.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider seeded');
    const res = await call(sim, 'PUT', paths.upgrade(cp.id), {
      body: { components: [{ name: 'engine', version: '5.0.0' }] },
    });
    expect(res.status).toBe(200);
    expect(typeof res.json.Result).toBe('string');
    expect(sim.state.cloudProviders[0]?.status).toBe('Upgrading');
  });

  it('lists workgroups (8) with databases, workspaces and derived names', async () => {
    const sim = await startSim({ fleet: { workgroups: 3, workspacesPerWorkgroup: 2 } });
    const res = await call(sim, 'GET', paths.workgroups());
    expect(res.status).toBe(200);
    const workgroups = WorkgroupSchema.array().parse(res.json.Result);
    expect(workgroups).toHaveLength(3);
    const first = workgroups[0];
    const cp = sim.state.cloudProviders.find((p) => p.id === first?.cloud_provider_id);
    expect(first?.cloud_provider_name).toBe(cp?.name);
    expect(first?.workspaces).toHaveLength(2);
    expect(first?.workspaces?.[0]?.workgroup_name).toBe(first?.name);
    expect(first?.svc_databases?.length).toBeGreaterThanOrEqual(2);
    expect(first?.org_id).toBe(sim.state.org.org_id);
  });

  it('lists allowed IPs (9)', async () => {
    const sim = await startSim();
    const wg = sim.state.workgroups[0];
    if (!wg) throw new Error('no workgroup seeded');
    const res = await call(sim, 'GET', paths.allowList(wg.workgroup_id));
    expect(res.status).toBe(200);
    const entries = AllowListEntrySchema.array().parse(res.json.Result);
    expect(entries.map((e) => e.cidr)).toEqual(wg.allow_list.map((e) => e.cidr));
  });

  it("checks the current IP (10) against the caller's loopback address", async () => {
    const sim = await startSim();
    const wg = sim.state.workgroups[0];
    if (!wg) throw new Error('no workgroup seeded');
    const res = await call(sim, 'GET', paths.currentIp(wg.workgroup_id));
    expect(res.status).toBe(200);
    expect(CurrentIpSchema.parse(res.json.Result)).toEqual({ isAllowed: true, currentIp: '127.0.0.1' });
  });

  it('disables the allow list (11), which list workgroups then reflects', async () => {
    const sim = await startSim();
    const wg = sim.state.workgroups.find((candidate) => candidate.enable_allow_list);
    if (!wg) throw new Error('no enforced allow list seeded');
    const res = await call(sim, 'PUT', paths.disableAllowList(wg.workgroup_id));
    expect(res.status).toBe(200);
    expect(typeof res.json.Result).toBe('string');
    const listed = await call(sim, 'GET', paths.workgroups());
    const after = listed.json.Result.find(
      (w: { workgroup_id: string }) => w.workgroup_id === wg.workgroup_id,
    );
    expect(after.enable_allow_list).toBe(false);
  });

  it('lists org users (12) with roles and last-login times', async () => {
    const sim = await startSim();
    const res = await call(sim, 'GET', paths.users(), { auth: 'bearer' });
    expect(res.status).toBe(200);
    const users = OrgUserSchema.array().parse(res.json);
    expect(users.length).toBeGreaterThan(1);
    expect(users[0]?.roles?.[0]?.name).toBe('org-admin');
    expect(users.every((u) => typeof u.metadata?.lastLogin === 'string')).toBe(true);
  });

  it('starts resuming a Stopped workspace (13)', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Stopped');
    const res = await call(sim, 'POST', paths.resume(ws.workgroup_id, ws.workspace_id));
    expect(res.status).toBe(200);
    expect(typeof res.json.Result).toBe('string');
  });

  it('starts pausing an Active workspace (14)', async () => {
    const sim = await startSim();
    const ws = workspaceWithStatus(sim.state, 'Active');
    const res = await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id));
    expect(res.status).toBe(200);
    expect(typeof res.json.Result).toBe('string');
  });

  it('deletes a database without workspaces (15)', async () => {
    const sim = await startSim();
    const db = emptyDatabase(sim.state);
    const res = await call(sim, 'DELETE', paths.database(db.workgroup_id, db.database_id));
    expect(res.status).toBe(200);
    expect(typeof res.json.Result).toBe('string');
    expect(sim.state.databases.some((d) => d.database_id === db.database_id)).toBe(false);
  });
});
