import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { CLUSTER_LOG_TYPES } from '../../../src/api/schemas.js';
import { formatFleet, MAX_FLEET, parseFleet, SimStateSchema, seedState } from '../../../src/sim/index.js';

const FLEET = { workgroups: 6, workspacesPerWorkgroup: 4 };

describe('seedState', () => {
  it('gives the same state for the same seed and fleet', () => {
    expect(JSON.stringify(seedState({ seed: 99, fleet: FLEET }))).toBe(
      JSON.stringify(seedState({ seed: 99, fleet: FLEET })),
    );
  });

  it('gives different ids and figures for a different seed', () => {
    const a = seedState({ seed: 1, fleet: FLEET });
    const b = seedState({ seed: 2, fleet: FLEET });
    expect(a.workgroups.map((wg) => wg.workgroup_id)).not.toEqual(b.workgroups.map((wg) => wg.workgroup_id));
    expect(a.workspaces.map((ws) => ws.vertex_count)).not.toEqual(b.workspaces.map((ws) => ws.vertex_count));
  });

  it('produces a state that its own schema accepts', () => {
    expect(() =>
      SimStateSchema.parse(seedState({ seed: 5, fleet: { workgroups: 25, workspacesPerWorkgroup: 3 } })),
    ).not.toThrow();
  });

  it('builds W workgroups of S workspaces, each workgroup with its own BYOC cloud provider and an empty database', () => {
    const state = seedState({ seed: 3, fleet: FLEET });
    expect(state.workgroups).toHaveLength(6);
    expect(state.workspaces).toHaveLength(24);
    expect(new Set(state.workgroups.map((wg) => wg.cloud_provider_id)).size).toBe(6);
    expect(state.cloudProviders).toHaveLength(6);
    for (const wg of state.workgroups) {
      const databases = state.databases.filter((db) => db.workgroup_id === wg.workgroup_id);
      const used = new Set(
        state.workspaces.filter((ws) => ws.workgroup_id === wg.workgroup_id).map((ws) => ws.database_id),
      );
      expect(databases.length).toBeGreaterThan(used.size);
    }
  });

  it('records two backups per workspace with vertex and edge counts', () => {
    const state = seedState({ seed: 3, fleet: FLEET });
    for (const ws of state.workspaces) {
      const backups = state.backups.filter((b) => b.workspace_id === ws.workspace_id);
      expect(backups).toHaveLength(2);
      for (const backup of backups) {
        expect(backup.vertex_count).toBeGreaterThan(0);
        expect(backup.vertex_count).toBeLessThanOrEqual(ws.vertex_count);
        expect(backup.edge_count).toBeGreaterThan(0);
      }
    }
  });

  it('gives every workgroup an allow list of a few valid entries, IPv4 and IPv6 across the fleet', () => {
    const state = seedState({ seed: 3, fleet: FLEET });
    for (const wg of state.workgroups) {
      expect(wg.allow_list.length).toBeGreaterThanOrEqual(2);
      expect(wg.allow_list.length).toBeLessThanOrEqual(5);
    }
    const cidrs = state.workgroups.flatMap((wg) => wg.allow_list.map((entry) => entry.cidr));
    expect(cidrs.some((cidr) => cidr.includes(':'))).toBe(true);
    expect(cidrs.some((cidr) => cidr.endsWith('/32'))).toBe(true);
  });

  it('seeds in-database users and org users with roles and last-login times', () => {
    const state = seedState({ seed: 3, fleet: FLEET });
    for (const ws of state.workspaces) {
      expect(state.dbUsers.filter((u) => u.workspace_id === ws.workspace_id).length).toBeGreaterThanOrEqual(
        1,
      );
    }
    expect(state.orgUsers.length).toBeGreaterThanOrEqual(3);
    for (const user of state.orgUsers) {
      expect(user.roles?.length).toBe(1);
      expect(Date.parse(user.metadata?.lastLogin ?? '')).not.toBeNaN();
    }
  });

  it('starts mostly Active with at least one Stopped workspace', () => {
    const state = seedState({ seed: 3, fleet: { workgroups: 20, workspacesPerWorkgroup: 5 } });
    const statuses = state.workspaces.map((ws) => ws.status);
    const active = statuses.filter((status) => status === 'Active').length;
    expect(active).toBeGreaterThan(statuses.length / 2);
    expect(statuses).toContain('Stopped');
    const small = seedState({ seed: 1, fleet: { workgroups: 1, workspacesPerWorkgroup: 2 } });
    expect(small.workspaces.map((ws) => ws.status).sort()).toEqual(['Active', 'Stopped']);
  });

  it('names workgroups so globs can target them, with a drill workspace in ops from four workgroups up', () => {
    const state = seedState({ seed: 8, fleet: { workgroups: 4, workspacesPerWorkgroup: 2 } });
    const names = state.workgroups.map((wg) => wg.name);
    const [dev, prod] = [picomatch('dev-*'), picomatch('prod-*')];
    expect(names.filter((name) => dev(name))).toEqual(['dev-alpha']);
    expect(names.filter((name) => prod(name))).toEqual(['prod-core']);
    const ops = state.workgroups.find((wg) => wg.name === 'ops');
    expect(
      state.workspaces.find((ws) => ws.workgroup_id === ops?.workgroup_id && ws.name === 'drill'),
    ).toBeDefined();
  });

  it('keeps names unique when the fleet outgrows the name lists', () => {
    const state = seedState({ seed: 8, fleet: { workgroups: 45, workspacesPerWorkgroup: 12 } });
    expect(new Set(state.workgroups.map((wg) => wg.name)).size).toBe(45);
    for (const wg of state.workgroups) {
      const names = state.workspaces.filter((ws) => ws.workgroup_id === wg.workgroup_id).map((ws) => ws.name);
      expect(new Set(names).size).toBe(12);
    }
  });

  it('uses realistic ids and only the documented log types', () => {
    const state = seedState({ seed: 3, fleet: FLEET });
    expect(state.workgroups[0]?.workgroup_id).toMatch(/^wg-[0-9a-f]{6}$/);
    expect(state.workspaces[0]?.workspace_id).toMatch(/^ws-[0-9a-f]{6}$/);
    expect(state.databases[0]?.database_id).toMatch(/^db-[0-9a-f]{6}$/);
    expect(state.cloudProviders[0]?.id).toMatch(/^cp-[0-9a-f]{6}$/);
    expect(state.backups[0]?.backup_id).toMatch(/^bk-[0-9a-f]{8}$/);
    for (const cp of state.cloudProviders) {
      for (const type of cp.cluster_enabled_log_types ?? []) expect(CLUSTER_LOG_TYPES).toContain(type);
      expect(['cloud_a', 'cloud_b', 'cloud_c']).toContain(cp.platform);
    }
  });
});

describe('parseFleet', () => {
  it('reads WxS', () => {
    expect(parseFleet('20x5')).toEqual({ workgroups: 20, workspacesPerWorkgroup: 5 });
    expect(formatFleet(parseFleet('3X4'))).toBe('3x4');
  });

  it.each(['3by4', '3x', 'x4', '-1x2', '2.5x3', ''])('rejects %j saying what the format is', (text) => {
    expect(() => parseFleet(text)).toThrow(/WxS/);
  });

  it('rejects sizes outside the bounds, naming them', () => {
    expect(() => parseFleet('0x3')).toThrow(/workgroups must be 1-/);
    expect(() => parseFleet(`3x${MAX_FLEET.workspacesPerWorkgroup + 1}`)).toThrow(/workspaces per workgroup/);
    expect(() => parseFleet('1000x30')).toThrow(/at most 20000 workspaces in all, got 30000/);
  });

  it('accepts the 1000x10 fleet the benchmarks use', () => {
    expect(parseFleet('1000x10')).toEqual({ workgroups: 1000, workspacesPerWorkgroup: 10 });
  });
});
