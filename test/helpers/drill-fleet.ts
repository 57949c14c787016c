import { type SimState, seedState } from '../../src/sim/index.js';
import { workspaceStatusFields } from '../../src/sim/status.js';

/** A 4×4 fleet (so `ops/drill` exists) with `ops/drill` Active, and a backup of it to restore. */
export function activeDrillFleet(): { state: SimState; backup: { id: string; vertices: number } } {
  const state = seedState({ seed: 11, fleet: { workgroups: 4, workspacesPerWorkgroup: 4 } });
  const drill = state.workspaces.find((ws) => ws.name === 'drill');
  if (!drill) throw new Error('seeded fleet has no ops/drill');
  Object.assign(drill, workspaceStatusFields('Active'));
  const backup = state.backups.find((bk) => bk.workspace_id === drill.workspace_id);
  if (!backup) throw new Error('seeded fleet has no backup of ops/drill');
  return { state, backup: { id: backup.backup_id, vertices: backup.vertex_count ?? 0 } };
}
