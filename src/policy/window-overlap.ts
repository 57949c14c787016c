import picomatch from 'picomatch';
import type { CheckContext } from './check.js';
import type { PolicyProblem } from './errors.js';
import { type LanguagePart, sharedName } from './glob-language.js';
import { problemAt } from './issues.js';
import type { TargetSelector } from './schema.js';

/**
 * Windows whose targets share a workspace: a workspace can be under one window only, or two
 * reconcilers would fight over it. Decided on the globs, as sets of names (glob-language.ts): two
 * targets overlap when some workgroup name and workspace name are selected by both, excludes
 * included. What no glob can tell (one target naming a workgroup by id, the other by name) is
 * found by the reconciliation, which leaves such a workspace alone and reports it.
 */
export function checkWindowOverlaps(
  context: CheckContext,
  windows: readonly { name: string; selector: TargetSelector | undefined }[],
): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  for (const [i, a] of windows.entries()) {
    for (const b of windows.slice(i + 1)) {
      if (!a.selector || !b.selector) continue;
      const shared = sharedWorkspace(a.selector, b.selector);
      if (!shared) continue;
      problems.push(problemAt(context.source, ['windows', b.name, 'target'], overlapMessage(a, b, shared)));
    }
  }
  return problems;
}

type Named = { name: string; selector: TargetSelector | undefined };
type Shared = { workgroup: string; workspace: string } | 'maybe';

function overlapMessage(a: Named, b: Named, shared: Shared): string {
  const tail = 'a workspace can be under one window only: narrow a target or add exclude';
  if (shared === 'maybe')
    return `windows "${a.name}" and "${b.name}" may both cover the same workspaces (${globList(a)} and ${globList(b)}); ${tail}`;
  const matching = (window: Named) =>
    window.selector?.workgroups.find((glob) => matches(glob, shared.workgroup)) ?? '';
  const groups = `workgroups "${matching(a)}" and "${matching(b)}" both match "${shared.workgroup}"`;
  return `windows "${a.name}" and "${b.name}" both cover workspaces such as "${shared.workgroup}/${shared.workspace}" (${groups}); ${tail}`;
}

function globList(window: Named): string {
  return (window.selector?.workgroups ?? []).map((glob) => `"${glob}"`).join(', ');
}

interface Excludes {
  /** Globs of workgroups left out whole. */
  readonly whole: readonly string[];
  /** `workgroup/workspace` globs. */
  readonly pairs: readonly (readonly [string, string])[];
}

/** Exclude entries as targets.ts reads them: `ops`, `ops/*` and `ops/**` leave a whole workgroup out. */
function excludesOf(selector: TargetSelector): Excludes {
  const whole: string[] = [];
  const pairs: [string, string][] = [];
  for (const entry of selector.exclude) {
    const slash = entry.indexOf('/');
    const space = slash === -1 ? undefined : entry.slice(slash + 1);
    if (space === undefined || space === '*' || space === '**')
      whole.push(slash === -1 ? entry : entry.slice(0, slash));
    else pairs.push([entry.slice(0, slash), space]);
  }
  return { whole, pairs };
}

/** Beyond this many `workgroup/workspace` excludes, they are left out of the proof (2^n cases). */
const MAX_PAIR_EXCLUDES = 8;

/**
 * A workgroup and workspace name both selectors select, checked against picomatch; `maybe` when
 * the globs may share one that could not be shown (an extglob's negation, a very large search).
 * For each set K of `workgroup/workspace` excludes, a workgroup name that only those of K can
 * apply to is looked for, and a workspace name none of K's workspace globs matches.
 */
function sharedWorkspace(a: TargetSelector, b: TargetSelector): Shared | undefined {
  const [ea, eb] = [excludesOf(a), excludesOf(b)];
  const all = [...ea.pairs, ...eb.pairs];
  const pairs = all.length > MAX_PAIR_EXCLUDES ? [] : all;
  // a name found without the excludes left out fails the check below, which has them: then maybe
  let maybe = false;
  for (let mask = 0; mask < 1 << pairs.length; mask += 1) {
    const inK = pairs.filter((_, index) => (mask & (1 << index)) !== 0);
    const outK = pairs.filter((_, index) => (mask & (1 << index)) === 0);
    const workgroup = sharedName([
      { globs: a.workgroups },
      { globs: b.workgroups },
      { globs: [...ea.whole, ...eb.whole], negated: true },
      { globs: outK.map(([group]) => group), negated: true },
    ] satisfies LanguagePart[]);
    if (workgroup === undefined) continue;
    const workspace = sharedName([
      { globs: a.workspaces },
      { globs: b.workspaces },
      { globs: inK.map(([, space]) => space), negated: true },
    ]);
    if (workspace === undefined) continue;
    if (workgroup === 'unknown' || workspace === 'unknown') {
      maybe = true;
      continue;
    }
    if (selects(a, ea, workgroup, workspace) && selects(b, eb, workgroup, workspace))
      return { workgroup, workspace };
    maybe = true;
  }
  return maybe ? 'maybe' : undefined;
}

function matches(glob: string, name: string): boolean {
  return picomatch(glob, { dot: true })(name);
}

/** Whether `selector` selects the workspace `workgroup/workspace`, by names, as targets.ts decides. */
function selects(
  selector: TargetSelector,
  excludes: Excludes,
  workgroup: string,
  workspace: string,
): boolean {
  return (
    selector.workgroups.some((glob) => matches(glob, workgroup)) &&
    !excludes.whole.some((glob) => matches(glob, workgroup)) &&
    selector.workspaces.some((glob) => matches(glob, workspace)) &&
    !excludes.pairs.some(([group, space]) => matches(group, workgroup) && matches(space, workspace))
  );
}
