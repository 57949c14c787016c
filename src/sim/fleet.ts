/** W workgroups × S workspaces each. */
export interface Fleet {
  workgroups: number;
  workspacesPerWorkgroup: number;
}

export const DEFAULT_FLEET: Fleet = { workgroups: 4, workspacesPerWorkgroup: 3 };
export const MAX_FLEET: Fleet = { workgroups: 2000, workspacesPerWorkgroup: 100 };
/** Bounds the generated state (about 17 kB a workspace) whatever the shape. */
export const MAX_FLEET_WORKSPACES = 20_000;

/** Parses `WxS` (e.g. `20x5`); throws a RangeError that says what was wrong. */
export function parseFleet(text: string): Fleet {
  const match = /^(\d+)x(\d+)$/i.exec(text.trim());
  if (!match) throw new RangeError(`fleet must look like WxS (e.g. 20x5), got "${text}"`);
  const fleet = { workgroups: Number(match[1]), workspacesPerWorkgroup: Number(match[2]) };
  if (fleet.workgroups < 1 || fleet.workgroups > MAX_FLEET.workgroups) {
    throw new RangeError(`fleet workgroups must be 1-${MAX_FLEET.workgroups}, got ${fleet.workgroups}`);
  }
  if (fleet.workspacesPerWorkgroup < 1 || fleet.workspacesPerWorkgroup > MAX_FLEET.workspacesPerWorkgroup) {
    throw new RangeError(
      `fleet workspaces per workgroup must be 1-${MAX_FLEET.workspacesPerWorkgroup}, got ${fleet.workspacesPerWorkgroup}`,
    );
  }
  const total = fleet.workgroups * fleet.workspacesPerWorkgroup;
  if (total > MAX_FLEET_WORKSPACES) {
    throw new RangeError(`fleet must hold at most ${MAX_FLEET_WORKSPACES} workspaces in all, got ${total}`);
  }
  return fleet;
}

export function formatFleet(fleet: Fleet): string {
  return `${fleet.workgroups}x${fleet.workspacesPerWorkgroup}`;
}
