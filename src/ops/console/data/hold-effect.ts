import type { Hold } from '../../../engine/index.js';

/**
 * What a hold does to one workspace here. Only a window brings a held workspace to the held state
 * (docs/windows.md "Holds"); a `pause` job only skips a workspace held active and a `resume` job
 * one held stopped. So a hold on a workspace no window covers keeps it in the held state only if it
 * is in it already: held `stopped` while Active, nothing will stop it for the hold.
 *
 * Whether a window covers the workspace is the console's own reading (the windows' decisions over
 * the listing) until src/policy says it in a helper of its own.
 */
export interface HoldEffect {
  /** Something keeps the workspace in the held state; null when the policy in force cannot be read. */
  inEffect: boolean | null;
  /** What acts on the hold here, in words. */
  effect: string;
}

const LIKE: Record<Hold['state'], readonly string[]> = {
  active: ['Active', 'Resuming'],
  stopped: ['Stopped', 'Stopping'],
};

/**
 * `window`: the window covering the workspace; null when none does; undefined when the policy in
 * force cannot be read (which windows there are is unknown).
 */
export function holdEffect(hold: Hold, status: string, window: string | null | undefined): HoldEffect {
  if (window === undefined)
    return { inEffect: null, effect: 'unknown: the policy in force cannot be read here' };
  if (window !== null) return { inEffect: true, effect: `window ${window} keeps it ${hold.state}` };
  if (LIKE[hold.state].includes(status))
    return {
      inEffect: true,
      effect: `no window covers it: ${hold.state === 'active' ? 'pause' : 'resume'} jobs skip it`,
    };
  return {
    inEffect: false,
    effect: `nothing acts on it here: no window covers this workspace, so nothing brings it to ${hold.state} (jobs only skip held workspaces)`,
  };
}
