import { type SimState, seedState } from '../../../src/sim/index.js';

type SimCloudProvider = SimState['cloudProviders'][number];

/** Components every provider of `providerState` runs, as the simulator writes them (JSON text). */
export const COMPONENTS = { engine: '4.1.3', gateway: '1.9.2', agent: '2.4.0', autoscaler: '1.2.0' };

/**
 * A seeded fleet (workgroups prod-core, dev-alpha, staging-eu, ops, … in order) whose providers
 * all record version 1.4.2, run `COMPONENTS`, log `api` only and have the same node groups, so
 * tests can state exact expectations. `change` edits the state before it is used.
 */
export function providerState(workgroups: number, change: (state: SimState) => void = () => {}): SimState {
  const state = seedState({ seed: 21, fleet: { workgroups, workspacesPerWorkgroup: 1 } });
  for (const cp of state.cloudProviders) {
    cp.version = '1.4.2';
    cp.component_versions = JSON.stringify(COMPONENTS);
    cp.cluster_enabled_log_types = ['api'];
    cp.last_error = '';
    cp.node_group_config = {
      ng_16: { min_size: 0, max_size: 4, overprovisioning_factor: 1 },
      ng_32: { min_size: 0, max_size: 2, overprovisioning_factor: 0 },
      ng_system: { min_size: 1, max_size: 3, overprovisioning_factor: 0 },
    };
  }
  change(state);
  return state;
}

/** The provider bound to the workgroup named `workgroup`, in a state or a running simulator. */
export function providerOf(state: SimState, workgroup: string): SimCloudProvider {
  const wg = state.workgroups.find((w) => w.name === workgroup);
  const cp = state.cloudProviders.find((p) => p.id === wg?.cloud_provider_id);
  if (!cp) throw new Error(`no provider for workgroup ${workgroup}`);
  return cp;
}

export function providerPath(id: string, suffix = ''): string {
  return `/controller/v4/v2/cloud-providers/${id}${suffix}`;
}
