/**
 * The programs a secret sink command may run on this machine (`NIGHTSHIFT_SINK_COMMANDS`): their
 * absolute paths, matched exactly; an empty set allows none; undefined allows any.
 */
export type SinkCommandAllowlist = ReadonlySet<string> | undefined;

/**
 * Why `program` may not run as a sink command here, or undefined when it may. Matched as written:
 * a path through `..` or a link's other name is not the listed program, and a bare name would run
 * whatever the PATH finds first.
 */
export function sinkProgramRefusal(program: string, allowed: SinkCommandAllowlist): string | undefined {
  if (allowed === undefined || allowed.has(program)) return undefined;
  if (allowed.size === 0) return 'no sink command may run here (NIGHTSHIFT_SINK_COMMANDS=none)';
  return `it is not one of the programs NIGHTSHIFT_SINK_COMMANDS allows (${[...allowed].join(', ')}), by absolute path as written`;
}

/**
 * What of the worker's environment a sink command sees besides its `NIGHTSHIFT_SECRET_*` values
 * and the names its `env:` lists: enough to find programs and a home, no credential.
 */
export const SINK_BASE_ENVIRONMENT = ['PATH', 'HOME'] as const;

/**
 * Variables a sink's `env:` may not pass on: nightshift's own (`NIGHTSHIFT_*`: the API key, bearer
 * and UI tokens, Redis passwords, the policy key) and `REDIS_URL`, which may hold a password.
 */
export function isNightshiftVariable(name: string): boolean {
  return name === 'REDIS_URL' || name.startsWith('NIGHTSHIFT_');
}
