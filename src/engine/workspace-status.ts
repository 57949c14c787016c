/**
 * The workspace statuses the actions reason about. The spec leaves status values open; these
 * are the ones the platform reports (and the simulator implements, see docs/simulator.md).
 */
export const STATUS = {
  active: 'Active',
  stopping: 'Stopping',
  stopped: 'Stopped',
  resuming: 'Resuming',
  restoring: 'Restoring',
} as const;
