import { describe, expect, it } from 'vitest';
import { CloudProviderSchema } from '../../../src/api/schemas.js';
import { backupOf, call, eventually, listedStatus, paths, startSim, workspaceWithStatus } from './harness.js';

// Long enough that the first poll, right after the call, still sees the in-between status.
const TRANSITION_MS = 150;

/** Polls list workgroups and returns every distinct status seen, in order, until `last` shows. */
async function statusesUntil(sim: Awaited<ReturnType<typeof startSim>>, workspaceId: string, last: string) {
  const seen: string[] = [];
  await eventually(`${workspaceId} listed ${last}`, async () => {
    const status = await listedStatus(sim, workspaceId);
    if (status !== undefined && seen.at(-1) !== status) seen.push(status);
    return status === last ? true : undefined;
  });
  return seen;
}

describe('lifecycle over time, as list workgroups shows it', () => {
  it('takes a paused Active workspace through Stopping to Stopped', async () => {
    const sim = await startSim({ transitionMs: TRANSITION_MS });
    const ws = workspaceWithStatus(sim.state, 'Active');
    const started = Date.now();
    await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id));
    expect(await statusesUntil(sim, ws.workspace_id, 'Stopped')).toEqual(['Stopping', 'Stopped']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TRANSITION_MS - 5);
    const listed = await call(sim, 'GET', paths.workgroups());
    const shown = listed.json.Result.flatMap((wg: { workspaces: unknown[] }) => wg.workspaces).find(
      (w: { workspace_id: string }) => w.workspace_id === ws.workspace_id,
    );
    expect(shown).toMatchObject({ display_status: 'Paused', condition_type: 'Stopped' });
  });

  it('takes a resumed Stopped workspace through Resuming to Active', async () => {
    const sim = await startSim({ transitionMs: TRANSITION_MS });
    const ws = workspaceWithStatus(sim.state, 'Stopped');
    await call(sim, 'POST', paths.resume(ws.workgroup_id, ws.workspace_id));
    expect(await statusesUntil(sim, ws.workspace_id, 'Active')).toEqual(['Resuming', 'Active']);
  });

  it("takes a restored workspace through Restoring to Active with the backup's vertex and edge counts", async () => {
    const sim = await startSim({ transitionMs: TRANSITION_MS });
    const ws = workspaceWithStatus(sim.state, 'Active');
    const backup = backupOf(sim.state, ws.workspace_id);
    expect(ws.vertex_count).not.toBe(backup.vertex_count);
    await call(sim, 'POST', paths.restore(ws.workgroup_id, ws.workspace_id), {
      body: { backup_id: backup.backup_id },
    });
    expect(await statusesUntil(sim, ws.workspace_id, 'Active')).toEqual(['Restoring', 'Active']);
    const listed = await call(sim, 'GET', paths.workgroups());
    const shown = listed.json.Result.flatMap((wg: { workspaces: unknown[] }) => wg.workspaces).find(
      (w: { workspace_id: string }) => w.workspace_id === ws.workspace_id,
    );
    expect(shown).toMatchObject({ vertex_count: backup.vertex_count, edge_count: backup.edge_count });
  });

  it('restores a Stopped workspace too, ending Active', async () => {
    const sim = await startSim({ transitionMs: TRANSITION_MS });
    const ws = workspaceWithStatus(sim.state, 'Stopped');
    const backup = backupOf(sim.state, ws.workspace_id);
    await call(sim, 'POST', paths.restore(ws.workgroup_id, ws.workspace_id), {
      body: { backup_id: backup.backup_id },
    });
    expect(await statusesUntil(sim, ws.workspace_id, 'Active')).toEqual(['Restoring', 'Active']);
  });

  it('takes an upgraded cloud provider through Upgrading to Active with the new versions and node groups', async () => {
    const sim = await startSim({ transitionMs: TRANSITION_MS });
    const cp = sim.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider seeded');
    const before = CloudProviderSchema.parse(structuredClone(cp));
    const res = await call(sim, 'PUT', paths.upgrade(cp.id), {
      body: {
        components: [
          { name: 'engine', version: '5.0.0' },
          { name: 'vector-index', version: '0.3.0' },
        ],
        cluster_enabled_log_types: ['api', 'audit', 'scheduler'],
        node_group_config: {
          ng_32: { min_size: 1, max_size: 12 },
          prefetch_image_list: ['registry.example.net/x:1'],
        },
      },
    });
    expect(res.status).toBe(200);
    const during = await call(sim, 'GET', paths.cloudProvider(cp.id));
    expect(during.json.Result.status).toBe('Upgrading');
    expect(during.json.Result.component_versions).toBe(before.component_versions);
    const listed = await call(sim, 'GET', paths.workgroups());
    const wg = listed.json.Result.find((w: { cloud_provider_id: string }) => w.cloud_provider_id === cp.id);
    expect(wg.cloud_provider_status).toBe('Upgrading');

    const after = await eventually('the cloud provider Active again', async () => {
      const got = await call(sim, 'GET', paths.cloudProvider(cp.id));
      return got.json.Result.status === 'Active' ? got.json.Result : undefined;
    });
    const versions = JSON.parse(after.component_versions);
    expect(versions).toMatchObject({
      engine: '5.0.0',
      'vector-index': '0.3.0',
      gateway: JSON.parse(before.component_versions ?? '{}').gateway,
    });
    expect(after.cluster_enabled_log_types).toEqual(['api', 'audit', 'scheduler']);
    expect(after.node_group_config.ng_32).toMatchObject({ min_size: 1, max_size: 12 });
    expect(after.node_group_config.ng_16).toEqual(before.node_group_config?.ng_16);
    expect(after.node_group_config.prefetch_image_list).toEqual(['registry.example.net/x:1']);
    expect(after.version_number).toBe((before.version_number ?? 0) + 2);
  });

  it('makes a client read the status to be idempotent: a second pause answers 400 until resumed', async () => {
    const sim = await startSim({ transitionMs: TRANSITION_MS });
    const ws = workspaceWithStatus(sim.state, 'Active');
    expect((await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id))).status).toBe(200);
    expect((await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id))).status).toBe(400);
    await statusesUntil(sim, ws.workspace_id, 'Stopped');
    expect((await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id))).status).toBe(400);
    expect((await call(sim, 'POST', paths.resume(ws.workgroup_id, ws.workspace_id))).status).toBe(200);
  });

  it('carries a transition under way into GET /_sim/state and finishes it after loading that state', async () => {
    const first = await startSim({ transitionMs: 300 });
    const ws = workspaceWithStatus(first.state, 'Active');
    await call(first, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id));
    const saved = (await call(first, 'GET', '/_sim/state')).json;
    expect(saved.transitions).toEqual([
      expect.objectContaining({ kind: 'pause', workspace_id: ws.workspace_id }),
    ]);
    await first.close();

    const second = await startSim({ state: saved });
    expect(await listedStatus(second, ws.workspace_id)).toBe('Stopping');
    await eventually('the workspace listed Stopped', async () =>
      (await listedStatus(second, ws.workspace_id)) === 'Stopped' ? true : undefined,
    );
    expect(second.state.transitions).toEqual([]);
  });

  it('stops its timers on close, leaving the transition unfinished', async () => {
    const sim = await startSim({ transitionMs: 50 });
    const ws = workspaceWithStatus(sim.state, 'Active');
    await call(sim, 'POST', paths.pause(ws.workgroup_id, ws.workspace_id));
    const state = sim.state;
    await sim.close();
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(state.workspaces.find((w) => w.workspace_id === ws.workspace_id)?.status).toBe('Stopping');
  });
});
