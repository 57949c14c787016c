import type { Workgroup } from '../../src/api/index.js';

/** `wg-1` (dev-core), its workspaces Active and named as their ids: a listing for engine tests. */
export function activeWorkgroup(workspaceIds: readonly string[]): Workgroup {
  return {
    workgroup_id: 'wg-1',
    name: 'dev-core',
    region: 'us-east-1',
    workspaces: workspaceIds.map((id) => ({
      workspace_id: id,
      name: id,
      workgroup_id: 'wg-1',
      workgroup_name: 'dev-core',
      status: 'Active',
      region: 'us-east-1',
      workspace_type: { typeName: 'TG-8' },
    })),
  } as Workgroup;
}
