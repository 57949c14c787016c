import picomatch from 'picomatch';
import { z } from 'zod';

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

/** Whether `pattern` is `workgroup/workspace` (names, ids or globs): what `hold` accepts. */
export function holdPatternProblem(pattern: string): string | undefined {
  const parts = pattern.split('/');
  if (parts.length !== 2 || parts.some((part) => part.trim() === ''))
    return `expected <workgroup>/<workspace> (names, ids or globs such as dev-*/*), got "${pattern}"`;
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
