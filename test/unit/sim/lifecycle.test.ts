import { afterEach, describe, expect, it } from 'vitest';
import { Lifecycle, mergeComponentVersions, mergeNodeGroups } from '../../../src/sim/lifecycle.js';
import { seedState } from '../../../src/sim/seed.js';
import { SimStore } from '../../../src/sim/store.js';
import { FakeClock } from '../../helpers/clock.js';

const lifecycles: Lifecycle[] = [];
afterEach(() => {
  for (const lifecycle of lifecycles.splice(0)) lifecycle.cancelAll();
});

/** A store and a lifecycle on a pinned clock; transitions are completed by hand. */
function setup() {
  const store = new SimStore(seedState({ seed: 2, fleet: { workgroups: 2, workspacesPerWorkgroup: 3 } }));
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const completed: string[] = [];
  const lifecycle = new Lifecycle(store, {
    transitionMs: 60_000,
    clock,
    onComplete: (t) => completed.push(t.kind),
  });
  lifecycles.push(lifecycle);
  const active = store.state.workspaces.find((ws) => ws.status === 'Active');
  const stopped = store.state.workspaces.find((ws) => ws.status === 'Stopped');
  if (!active || !stopped) throw new Error('seed lacks an Active or a Stopped workspace');
  return { store, lifecycle, active, stopped, completed };
}

describe('Lifecycle', () => {
  it('shows Stopping at once and Stopped when a pause completes', () => {
    const { store, lifecycle, active, completed } = setup();
    const revision = store.revision;
    const version = active.version_number;
    const transition = lifecycle.pause(active);
    expect(active).toMatchObject({ status: 'Stopping', display_status: 'Pausing' });
    expect(store.revision).toBeGreaterThan(revision);
    expect(transition.completes_at).toBe('2025-01-01T00:01:00.000Z');
    expect(store.state.transitions).toHaveLength(1);
    lifecycle.complete(transition.id);
    expect(active).toMatchObject({ status: 'Stopped', display_status: 'Paused', condition_type: 'Stopped' });
    expect(active.version_number).toBe(version + 2);
    expect(store.state.transitions).toEqual([]);
    expect(completed).toEqual(['pause']);
  });

  it('shows Resuming and then Active for a resume', () => {
    const { lifecycle, stopped } = setup();
    const transition = lifecycle.resume(stopped);
    expect(stopped.status).toBe('Resuming');
    lifecycle.complete(transition.id);
    expect(stopped.status).toBe('Active');
  });

  it("restores the backup's counts only when the restore completes", () => {
    const { store, lifecycle, active } = setup();
    const backup = store.state.backups.find((b) => b.workspace_id === active.workspace_id);
    if (!backup) throw new Error('no backup');
    const before = active.vertex_count;
    const transition = lifecycle.restore(active, backup);
    expect(active).toMatchObject({ status: 'Restoring', vertex_count: before });
    lifecycle.complete(transition.id);
    expect(active).toMatchObject({
      status: 'Active',
      vertex_count: backup.vertex_count,
      edge_count: backup.edge_count,
    });
  });

  it('applies an upgrade on completion: versions merged, node groups merged, log types replaced', () => {
    const { store, lifecycle } = setup();
    const cp = store.state.cloudProviders[0];
    if (!cp) throw new Error('no cloud provider');
    const ng16 = structuredClone(cp.node_group_config?.ng_16);
    const transition = lifecycle.upgrade(cp, {
      components: [{ name: 'engine', version: '9.0.0' }],
      cluster_enabled_log_types: ['audit'],
      node_group_config: { ng_64: { max_size: 9 } },
    });
    expect(cp.status).toBe('Upgrading');
    lifecycle.complete(transition.id);
    expect(cp.status).toBe('Active');
    expect(JSON.parse(cp.component_versions ?? '{}').engine).toBe('9.0.0');
    expect(cp.cluster_enabled_log_types).toEqual(['audit']);
    expect(cp.node_group_config?.ng_64?.max_size).toBe(9);
    expect(cp.node_group_config?.ng_16).toEqual(ng16);
  });

  it('ignores a completion for a transition that is already gone', () => {
    const { lifecycle, active, completed } = setup();
    const transition = lifecycle.pause(active);
    lifecycle.complete(transition.id);
    lifecycle.complete(transition.id);
    expect(completed).toEqual(['pause']);
  });

  it('completes overdue transitions of a loaded state on the next tick', async () => {
    const { store, lifecycle, active } = setup();
    lifecycle.pause(active);
    lifecycle.cancelAll();
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const later = new Lifecycle(store, { transitionMs: 1, clock });
    lifecycles.push(later);
    later.scheduleAll();
    expect(active.status).not.toBe('Stopped');
    await clock.advance(0);
    expect(active.status).toBe('Stopped');
  });
});

describe('upgrade merges', () => {
  it('keeps the fields of a node group the request does not name', () => {
    const merged = mergeNodeGroups(
      { ng_16: { min_size: 0, max_size: 4, overprovisioning_factor: 1 }, prefetch_image_list: ['a'] },
      { ng_16: { max_size: 8 } },
    );
    expect(merged).toEqual({
      ng_16: { min_size: 0, max_size: 8, overprovisioning_factor: 1 },
      prefetch_image_list: ['a'],
    });
  });

  it('adds and replaces component versions, starting afresh from text that is not JSON', () => {
    expect(JSON.parse(mergeComponentVersions('{"engine":"1"}', [{ name: 'agent', version: '2' }]))).toEqual({
      engine: '1',
      agent: '2',
    });
    expect(mergeComponentVersions('engine=1', [{ name: 'engine', version: '3' }])).toBe('{"engine":"3"}');
  });
});
