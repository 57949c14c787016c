import picomatch from 'picomatch';
import { z } from 'zod';
import type { Workgroup } from '../api/index.js';
import { globSyntaxProblem, negates, type PolicyJob } from '../policy/index.js';
import { type SelectedWorkspace, selectTargets } from './targets.js';

/**
 * Holds: time-boxed exceptions an operator places on workspaces (`nightshift hold`), which windows
 * and pause/resume jobs honour. `src/store/holds.ts` keeps them in Redis.
 */

export const HOLD_STATES = ['active', 'stopped'] as const;
export type HoldState = (typeof HOLD_STATES)[number];

/** A time-boxed exception: the workspaces `pattern` matches are kept in `state` until `until`. */
export const HoldSchema = z.object({
  /** `workgroup/workspace`, each part a name, an id or a glob (`dev-*\/*`). */
  pattern: z.string(),
  state: z.enum(HOLD_STATES),
  until: z.iso.datetime(),
  reason: z.string(),
  by: z.string(),
  createdAt: z.iso.datetime(),
});
export type Hold = z.infer<typeof HoldSchema>;

/** Reads the holds in force. */
export interface HoldReader {
  /** The holds in force at `now`; with `readOnly`, the read changes nothing (no expired hold is removed). */
  active(now: Date, options?: { readOnly?: boolean }): Promise<Hold[]>;
}

/** A workspace as holds and the ledger name it. */
export interface WorkspaceNames {
  workgroupId: string;
  workgroupName?: string | undefined;
  workspaceId: string;
  workspaceName?: string | undefined;
}

/**
 * Why `pattern` is not what `hold` accepts: `workgroup/workspace`, each a name, an id or a glob,
 * none negated (as a policy's targets: `!dev-alpha/kg` would hold every workspace outside
 * dev-alpha) and none with a `[` or `{` left open (it would match that character itself).
 * `shapeOnly` checks the two parts alone: `release` takes a pattern exactly as it was held.
 */
export function holdPatternProblem(pattern: string, { shapeOnly = false } = {}): string | undefined {
  const parts = pattern.split('/');
  if (parts.length !== 2 || parts.some((part) => part.trim() === ''))
    return `expected <workgroup>/<workspace> (names, ids or globs such as dev-*/*), got "${pattern}"`;
  if (shapeOnly) return undefined;
  if (parts.some(negates))
    return `"${pattern}": negated globs are not supported; a hold names the workspaces it keeps (one hold each, or a glob such as "dev-*/*")`;
  for (const part of parts) {
    const problem = globSyntaxProblem(part);
    if (problem) return `"${pattern}": ${problem}`;
  }
  return undefined;
}

interface CompiledHold {
  hold: Hold;
  group: (text: string) => boolean;
  space: (text: string) => boolean;
}

const compiledHolds = new Map<string, Omit<CompiledHold, 'hold'>>();

function compile(hold: Hold): CompiledHold {
  let parts = compiledHolds.get(hold.pattern);
  if (!parts) {
    const slash = hold.pattern.indexOf('/');
    parts = {
      group: picomatch(hold.pattern.slice(0, slash), { dot: true }),
      space: picomatch(hold.pattern.slice(slash + 1), { dot: true }),
    };
    compiledHolds.set(hold.pattern, parts);
  }
  return { hold, ...parts };
}

const either = (test: (text: string) => boolean, name: string | undefined, id: string) =>
  test(id) || (name !== undefined && test(name));

/**
 * The hold in force on each workspace asked about, for many workspaces at one instant: the
 * unexpired holds are sorted once, and which of them name a workgroup is decided once per
 * workgroup, not once per workspace (a 10,000-workspace fleet view or reconciliation asks 10,000
 * times). Answers as `holdFor` does.
 */
export function holdLookup(holds: readonly Hold[], now: Date): (ws: WorkspaceNames) => Hold | undefined {
  const live = holds
    .filter((hold) => Date.parse(hold.until) > now.getTime())
    // newest first, ties in the order given (a stable sort): the first match is the one in force
    .sort((a, b) => (a.createdAt === b.createdAt ? 0 : a.createdAt > b.createdAt ? -1 : 1))
    .map(compile);
  const byWorkgroup = new Map<string, CompiledHold[]>();
  return (ws) => {
    if (live.length === 0) return undefined;
    const key = `${ws.workgroupId}\u0000${ws.workgroupName ?? ''}`;
    let candidates = byWorkgroup.get(key);
    if (!candidates) {
      candidates = live.filter((held) => either(held.group, ws.workgroupName, ws.workgroupId));
      byWorkgroup.set(key, candidates);
    }
    return candidates.find((held) => either(held.space, ws.workspaceName, ws.workspaceId))?.hold;
  };
}

/**
 * The hold in force on a workspace: of the unexpired holds whose pattern matches it (by name or
 * id), the one placed last, so a narrower exception placed later wins over a broad one.
 */
export function holdFor(holds: readonly Hold[], ws: WorkspaceNames, now: Date): Hold | undefined {
  return holdLookup(holds, now)(ws);
}

/** How a hold reads in a target's reason: `held active until 2026-12-01T08:00:00Z by ana (customer demo)`. */
export function describeHold(hold: Hold): string {
  return `held ${hold.state} until ${hold.until} by ${hold.by} (${hold.reason})`;
}

/** The workspaces of a listing `pattern` matches, by name or id, in the listing's order. */
export function workspacesHeldBy(pattern: string, workgroups: readonly Workgroup[]): SelectedWorkspace[] {
  const slash = pattern.indexOf('/');
  // a selector of one glob each, no excludes: the same matching (names or ids, dot) as targets
  return selectTargets(workgroups, {
    workgroups: [pattern.slice(0, slash)],
    workspaces: [pattern.slice(slash + 1)],
    exclude: [],
  });
}

/** The actions whose runs read holds: a `pause` skips a workspace held active, a `resume` one held stopped. */
export const HOLD_READING_ACTIONS: ReadonlySet<string> = new Set(['pause', 'resume']);

/** What of a policy acts on a workspace, and so honours a hold on it. */
export interface HoldCoverage {
  /**
   * The windows whose target selects it. One brings a held workspace to its held state; under
   * two or more it is left alone (a conflict), hold or not.
   */
  readonly windows: readonly string[];
  /** The `pause` and `resume` jobs whose target selects it. */
  readonly jobs: readonly string[];
}

/**
 * Who would act on each workspace of a listing, by its key (`workgroupId/workspaceId`), so a hold
 * on it does something: one window, or a pause or resume job. Jobs and windows suspended in the
 * policy (`suspend: true`) act on nothing. Pure: `hold`, `holds`, `drift` and the console ask it
 * with the listing and the policy in force; `honoursHolds` says whether anything does.
 */
export function holdCoverage(
  jobs: readonly PolicyJob[],
  workgroups: readonly Workgroup[],
): (key: string) => HoldCoverage {
  const windows = new Map<string, string[]>();
  const readers = new Map<string, string[]>();
  for (const job of jobs) {
    if (job.suspend || !job.target) continue;
    const into = job.window ? windows : HOLD_READING_ACTIONS.has(job.action) ? readers : undefined;
    if (!into) continue;
    for (const ws of selectTargets(workgroups, job.target.selector)) {
      const key = `${ws.workgroupId}/${ws.workspaceId}`;
      into.set(key, [...(into.get(key) ?? []), job.name]);
    }
  }
  return (key) => ({ windows: windows.get(key) ?? [], jobs: readers.get(key) ?? [] });
}

/** Whether anything of the policy acts on a held workspace: exactly one window, or a pause or resume job. */
export function honoursHolds(coverage: HoldCoverage): boolean {
  return coverage.windows.length === 1 || coverage.jobs.length > 0;
}

/** The workspaces a pattern matches, and those of them nothing acts on (undefined when the policy is unknown). */
export interface HoldReach {
  readonly matched: readonly SelectedWorkspace[];
  readonly idle: readonly SelectedWorkspace[] | undefined;
}

/**
 * What a hold on `pattern` reaches in a listing (undefined when there is none), judged by the
 * policy's `coverage` when it is known: the CLI's `hold` and the console's hold preview ask it.
 */
export function holdReach(
  pattern: string,
  {
    workgroups,
    coverage,
  }: {
    readonly workgroups: readonly Workgroup[] | undefined;
    readonly coverage: ((key: string) => HoldCoverage) | undefined;
  },
): HoldReach | undefined {
  if (!workgroups) return undefined;
  const matched = workspacesHeldBy(pattern, workgroups);
  const idle = coverage
    ? matched.filter((ws) => !honoursHolds(coverage(`${ws.workgroupId}/${ws.workspaceId}`)))
    : undefined;
  return { matched, idle };
}
