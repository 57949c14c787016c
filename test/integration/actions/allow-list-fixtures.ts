import { type SimState, seedState } from '../../../src/sim/index.js';

export interface GroupSpec {
  enabled: boolean;
  /** `[cidr, note]`; a missing note leaves the entry without one. */
  entries: ReadonlyArray<readonly [string, string?]>;
}

/**
 * A seeded fleet whose workgroups (named prod-core, dev-alpha, staging-eu, … in order) carry
 * the given allow lists. The caller of every test is 127.0.0.1: `127.0.0.1/32` admits it.
 */
export function allowListState(groups: readonly GroupSpec[]): SimState {
  const state = seedState({ seed: 11, fleet: { workgroups: groups.length, workspacesPerWorkgroup: 1 } });
  state.workgroups.forEach((workgroup, g) => {
    const spec = groups[g] as GroupSpec;
    workgroup.enable_allow_list = spec.enabled;
    workgroup.allow_list = spec.entries.map(([cidr, note], e) => ({
      cidr,
      id: `al-${g}-${e}`,
      ...(note === undefined ? {} : { note }),
    }));
  });
  return state;
}

export function allowListPath(workgroupId: string, suffix = ''): string {
  return `/controller/v4/v2/workgroups/${workgroupId}/allow_list${suffix}`;
}
