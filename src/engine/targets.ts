import picomatch from 'picomatch';
import type { Workgroup, Workspace } from '../api/index.js';
import type { MaxTargets, PolicyJob, TargetSelector } from '../policy/index.js';
import type { Action } from './action.js';

/** A workspace a job acts on. Names fall back to ids when the API leaves them out. */
export interface SelectedWorkspace {
  readonly workgroupId: string;
  readonly workgroupName: string;
  readonly workspaceId: string;
  readonly workspaceName: string;
  readonly status: string | undefined;
  readonly databaseId: string | undefined;
  readonly region: string | undefined;
  /** The API's record, for actions that need more. */
  readonly workspace: Workspace;
}

/** A workgroup a job acts on, for actions that work per workgroup (allow lists, cloud providers). */
export interface SelectedWorkgroup {
  readonly workgroupId: string;
  readonly workgroupName: string;
  readonly cloudProviderId: string | undefined;
  readonly platform: string | undefined;
  readonly region: string | undefined;
  readonly workgroup: Workgroup;
}

type Matcher = (name: string | null | undefined, id: string | null | undefined) => boolean;

interface CompiledSelector {
  readonly workgroup: Matcher;
  readonly workspace: Matcher;
  /** Exclude entries naming a whole workgroup: `ops`, `ops/*`, `ops/**`. */
  readonly wholeWorkgroup: Matcher;
  /** Exclude entries naming workspaces: `dev-core/*`, `*\/scratch-*`. */
  readonly excluded: (workgroup: Workgroup, workspace: Workspace) => boolean;
}

const NEVER: Matcher = () => false;

/** Globs match names or ids; `dot` lets `*` match names that start with a dot, as users expect of a name glob. */
function matcher(globs: readonly string[]): Matcher {
  if (globs.length === 0) return NEVER;
  const test = picomatch([...globs], { dot: true });
  return (name, id) => (typeof name === 'string' && test(name)) || (typeof id === 'string' && test(id));
}

const compiled = new WeakMap<TargetSelector, CompiledSelector>();

function compile(selector: TargetSelector): CompiledSelector {
  let result = compiled.get(selector);
  if (result) return result;
  const whole: string[] = [];
  const pairs: { workgroup: Matcher; workspace: Matcher }[] = [];
  for (const entry of selector.exclude) {
    const slash = entry.indexOf('/');
    if (slash === -1) {
      whole.push(entry);
      continue;
    }
    const workspacePart = entry.slice(slash + 1);
    if (workspacePart === '*' || workspacePart === '**') whole.push(entry.slice(0, slash));
    else pairs.push({ workgroup: matcher([entry.slice(0, slash)]), workspace: matcher([workspacePart]) });
  }
  result = {
    workgroup: matcher(selector.workgroups),
    workspace: matcher(selector.workspaces),
    wholeWorkgroup: matcher(whole),
    excluded: (workgroup, workspace) =>
      pairs.some(
        (pair) =>
          pair.workgroup(workgroup.name, workgroup.workgroup_id) &&
          pair.workspace(workspace.name, workspace.workspace_id),
      ),
  };
  compiled.set(selector, result);
  return result;
}

function selectedWorkgroups(workgroups: readonly Workgroup[], selector: CompiledSelector): Workgroup[] {
  return workgroups.filter(
    (workgroup) =>
      typeof workgroup.workgroup_id === 'string' &&
      selector.workgroup(workgroup.name, workgroup.workgroup_id) &&
      !selector.wholeWorkgroup(workgroup.name, workgroup.workgroup_id),
  );
}

/**
 * The workspaces a selector picks from the API's workgroup list, in the API's order. A workgroup
 * or workspace without an id is left out: no operation can address it.
 */
export function selectTargets(
  workgroups: readonly Workgroup[],
  selector: TargetSelector,
): SelectedWorkspace[] {
  const compiledSelector = compile(selector);
  const selected: SelectedWorkspace[] = [];
  for (const workgroup of selectedWorkgroups(workgroups, compiledSelector)) {
    const workgroupId = workgroup.workgroup_id as string;
    for (const workspace of workgroup.workspaces ?? []) {
      const workspaceId = workspace.workspace_id;
      if (typeof workspaceId !== 'string' || workspaceId === '') continue;
      if (!compiledSelector.workspace(workspace.name, workspaceId)) continue;
      if (compiledSelector.excluded(workgroup, workspace)) continue;
      selected.push({
        workgroupId,
        workgroupName: workgroup.name ?? workgroupId,
        workspaceId,
        workspaceName: workspace.name ?? workspaceId,
        status: workspace.status ?? undefined,
        databaseId: workspace.database_id ?? undefined,
        region: workspace.region ?? workgroup.region ?? undefined,
        workspace,
      });
    }
  }
  return selected;
}

/**
 * The workgroups a selector picks, for actions that act per workgroup. `workspaces:` does not
 * narrow this; `exclude:` leaves out a workgroup given bare (`ops`) or with all its workspaces
 * (`ops/*`).
 */
export function selectWorkgroups(
  workgroups: readonly Workgroup[],
  selector: TargetSelector,
): SelectedWorkgroup[] {
  return selectedWorkgroups(workgroups, compile(selector)).map((workgroup) => {
    const workgroupId = workgroup.workgroup_id as string;
    return {
      workgroupId,
      workgroupName: workgroup.name ?? workgroupId,
      cloudProviderId: workgroup.cloud_provider_id ?? undefined,
      platform: workgroup.platform ?? undefined,
      region: workgroup.region ?? undefined,
      workgroup,
    };
  });
}

/** All workspaces with an id: the whole a `maxTargets` percentage of a workspace action is taken of. */
export function countWorkspaces(workgroups: readonly Workgroup[]): number {
  let count = 0;
  for (const workgroup of workgroups) {
    if (typeof workgroup.workgroup_id !== 'string') continue;
    for (const workspace of workgroup.workspaces ?? []) {
      if (typeof workspace.workspace_id === 'string' && workspace.workspace_id !== '') count += 1;
    }
  }
  return count;
}

/** All workgroups with an id: the whole for a workgroup action's `maxTargets` percentage. */
export function countWorkgroups(workgroups: readonly Workgroup[]): number {
  return workgroups.filter((workgroup) => typeof workgroup.workgroup_id === 'string').length;
}

export interface TargetLimitCheck {
  readonly allowed: boolean;
  /** The most targets a run may have: the count, or the percentage of `total` rounded down. */
  readonly limit: number;
}

/**
 * Whether a run with `selected` targets stays within `maxTargets`. A percentage is of `total`, all
 * the targets of the action's kind the API lists, so a glob that suddenly matches everything is
 * caught. No limit allows any number.
 */
export function checkTargetLimit(
  maxTargets: MaxTargets | undefined,
  selected: number,
  total: number,
): TargetLimitCheck {
  if (maxTargets === undefined) return { allowed: true, limit: Number.POSITIVE_INFINITY };
  const limit = 'count' in maxTargets ? maxTargets.count : Math.floor((maxTargets.percent / 100) * total);
  return { allowed: selected <= limit, limit };
}

/** A run's targets as its job selects them from the listing, and whether `maxTargets` lets it act. */
export interface Selection {
  allowed: boolean;
  count: number;
  limit: number;
  workspaces: readonly SelectedWorkspace[];
  workgroups: readonly SelectedWorkgroup[];
}

/** The targets of a run of `job` with `action` in the fleet `workgroups`. */
export function resolveTargets(action: Action, job: PolicyJob, workgroups: readonly Workgroup[]): Selection {
  const selector = job.target?.selector;
  if (action.scope === 'none' || !selector) {
    return { allowed: true, count: 0, limit: Number.POSITIVE_INFINITY, workspaces: [], workgroups: [] };
  }
  if (action.scope === 'workgroup') {
    const selected = selectWorkgroups(workgroups, selector);
    const check = checkTargetLimit(job.maxTargets, selected.length, countWorkgroups(workgroups));
    return { ...check, count: selected.length, workspaces: [], workgroups: selected };
  }
  const selected = selectTargets(workgroups, selector);
  const check = checkTargetLimit(job.maxTargets, selected.length, countWorkspaces(workgroups));
  return { ...check, count: selected.length, workspaces: selected, workgroups: [] };
}
