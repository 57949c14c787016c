/**
 * Workspace statuses and how each one reads in the console fields. The spec leaves the
 * values open; these are the simulator's, documented in docs/simulator.md.
 */
export const WORKSPACE_STATUSES = {
  Active: { display_status: 'Running', condition_type: 'Ready' },
  Stopping: { display_status: 'Pausing', condition_type: 'Stopping' },
  Stopped: { display_status: 'Paused', condition_type: 'Stopped' },
  Resuming: { display_status: 'Resuming', condition_type: 'Starting' },
  Restoring: { display_status: 'Restoring', condition_type: 'Restoring' },
} as const;
export type WorkspaceStatus = keyof typeof WORKSPACE_STATUSES;

export function workspaceStatusFields(status: WorkspaceStatus) {
  return { status, ...WORKSPACE_STATUSES[status] };
}

export const CLOUD_PROVIDER_STATUS = { active: 'Active', upgrading: 'Upgrading' } as const;
