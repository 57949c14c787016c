import { actionRegistry } from '../../jobs/index.js';
import type { Workgroup } from '../api/index.js';
import type { Settings } from '../config/index.js';
import { type HoldCoverage, type HoldReach, holdCoverage, type SelectedWorkspace } from '../engine/index.js';
import type { Logger } from '../log/index.js';
import { checkPolicy, didYouMean } from '../policy/index.js';
import { RedisFleetListings } from '../store/index.js';
import { UsageError } from './exit.js';
import { policyTextInForce } from './policy-in-force.js';
import { policyVariables } from './policy-io.js';
import { actionApiClient, apiSettings, type RedisRuntime } from './runtime.js';

/**
 * What `hold` and `holds` tell of a hold beyond Redis: which workspaces of the fleet it matches,
 * and which of them nothing of the policy in force acts on (no window, no pause or resume job),
 * so that the hold changes nothing there.
 */

interface Listing {
  readonly workgroups: readonly Workgroup[] | undefined;
  readonly from: string;
}

/** The fleet and the policy a hold is judged against; either may be unknown, with why. */
export interface HoldContext {
  readonly workgroups: readonly Workgroup[] | undefined;
  /** Where the listing came from (`the API`, `the listing run … kept at …`), or why there is none. */
  readonly listing: string;
  /** Who acts on each workspace, from the policy in force; undefined when it is unknown. */
  readonly coverage: ((key: string) => HoldCoverage) | undefined;
  /** The policy, or why there is none. */
  readonly policy: string;
}

/**
 * The fleet and the policy in force (`--policy FILE`, else the one the schedulers run). The fleet
 * comes from the API when `fresh` (placing a hold), else from the listing the last run kept in
 * Redis (listing holds calls no API); either way the other source when the first has none.
 */
export async function holdContext(
  settings: Settings,
  runtime: RedisRuntime,
  log: Logger,
  { fresh, policyFile }: { fresh: boolean; policyFile: string | undefined },
): Promise<HoldContext> {
  const fromApi = async (): Promise<Listing> => {
    try {
      const api = actionApiClient(settings, apiSettings(settings), log);
      try {
        return { workgroups: (await api.listWorkgroups()).result, from: 'listed from the API just now' };
      } finally {
        await api.close();
      }
    } catch (error) {
      return { workgroups: undefined, from: `the API could not list it: ${(error as Error).message}` };
    }
  };
  const fromRedis = async (): Promise<Listing> => {
    const kept = await new RedisFleetListings(runtime.redis, { prefix: runtime.prefix }).latest();
    return kept
      ? { workgroups: kept.workgroups, from: `as run ${kept.runId} listed it at ${kept.at}` }
      : { workgroups: undefined, from: 'no run has kept a listing in Redis' };
  };
  const [first, second] = fresh ? [fromApi, fromRedis] : [fromRedis, fromApi];
  const tried = await first();
  const found = tried.workgroups ? tried : await second();
  const { workgroups } = found;
  const listing = found === tried ? tried.from : `${tried.from}; ${found.from}`;
  const text = await policyTextInForce(runtime.policies, policyFile, runtime.prefix);
  if (!text.known) return { workgroups, listing, coverage: undefined, policy: text.why };
  const { policy } = checkPolicy(text.text, text.file, {
    registry: actionRegistry,
    ...policyVariables(settings),
    unsetVariables: 'warning',
  });
  if (!policy || !workgroups)
    return {
      workgroups,
      listing,
      coverage: undefined,
      policy: policy ? text.source : `${text.source} could not be read: nightshift validate says why`,
    };
  return { workgroups, listing, coverage: holdCoverage(policy.jobs, workgroups), policy: text.source };
}

// moved to the engine for the console's hold preview; `hold` and `holds` keep importing it from here
export { type HoldReach, holdReach } from '../engine/index.js';

/** `dev-gamma/lineage (Active)`, and when two windows cover it, that they leave it alone. */
function describeIdle(ws: SelectedWorkspace, coverage: HoldContext['coverage']): string {
  const windows = coverage?.(`${ws.workgroupId}/${ws.workspaceId}`).windows ?? [];
  const conflict =
    windows.length > 1 ? `; under windows ${windows.join(' and ')} at once, which leave it alone` : '';
  return `${ws.workgroupName}/${ws.workspaceName} (${ws.status ?? 'status unknown'}${conflict})`;
}

const LISTED = 10;

/** The idle workspaces in a line: the first ten, and how many more. */
export function idleList(idle: readonly SelectedWorkspace[], coverage: HoldContext['coverage']): string {
  const shown = idle.slice(0, LISTED).map((ws) => describeIdle(ws, coverage));
  return `${shown.join(', ')}${idle.length > LISTED ? ` and ${idle.length - LISTED} more` : ''}`;
}

/**
 * Refuses a pattern that matches no workspace of a known fleet (`--force` places it anyway, for a
 * workspace yet to be created), naming the closest workspace.
 */
export function refuseUnmatched(pattern: string, reach: HoldReach, context: HoldContext): void {
  if (reach.matched.length > 0) return;
  const names = (context.workgroups ?? []).flatMap((group) =>
    (group.workspaces ?? []).map((ws) => `${group.name ?? group.workgroup_id}/${ws.name ?? ws.workspace_id}`),
  );
  const suggestion = didYouMean(pattern, names);
  throw new UsageError(
    `"${pattern}" matches no workspace of the fleet (${context.listing})${suggestion ? `; did you mean "${suggestion}"?` : ''} (--force places the hold anyway, for a workspace yet to be created)`,
  );
}

/** The warnings `hold` prints when it places a hold: what it cannot tell, and what nothing acts on. */
export function holdWarnings(pattern: string, reach: HoldReach | undefined, context: HoldContext): string[] {
  if (!reach) return [`cannot tell which workspaces "${pattern}" matches (${context.listing})`];
  const { matched, idle } = reach;
  if (!idle)
    return [
      `cannot tell whether a window or job acts on the workspaces "${pattern}" matches (${context.policy})`,
    ];
  if (idle.length === 0) return [];
  return [
    `nothing acts on ${idle.length} of the ${matched.length} workspace(s) "${pattern}" matches, so the hold changes nothing there: no window covers them and no pause or resume job targets them in ${context.policy}: ${idleList(idle, context.coverage)}`,
  ];
}
