/**
 * Who may do what in the console. Each role includes the one before it: an approver is an
 * operator who may also approve, an operator a viewer who may also change things.
 */
export const ROLES = ['viewer', 'operator', 'approver'] as const;
export type Role = (typeof ROLES)[number];

/** Every change the console knows, and the least role that may make it; each route checks this table. */
export const CONSOLE_ACTIONS = {
  hold: 'operator',
  release: 'operator',
  suspend: 'operator',
  unsuspend: 'operator',
  cancel: 'operator',
  run: 'operator',
  approve: 'approver',
  reject: 'approver',
} as const satisfies Record<string, Role>;
export type ConsoleAction = keyof typeof CONSOLE_ACTIONS;

/** Whether `role` includes `least`. */
export function includes(role: Role, least: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(least);
}

/** Whether a principal of `role` may make the change `action`. */
export function may(role: Role, action: ConsoleAction): boolean {
  return includes(role, CONSOLE_ACTIONS[action]);
}
