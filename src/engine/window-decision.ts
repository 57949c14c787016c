import type { Workgroup } from '../api/index.js';
import { currentPeriod, type PolicyJob, type PolicyWindow } from '../policy/index.js';
import { workspaceRef } from './action.js';
import { describeHold, type Hold, holdLookup } from './holds.js';
import type { Ownership } from './ownership.js';
import { type SelectedWorkspace, selectTargets } from './targets.js';
import type { WindowState } from './window-state.js';
import { STATUS } from './workspace-status.js';

/**
 * What a window wants of each of its workspaces at one instant, and what a reconciliation does
 * about it. Pure: the reconciler, `plan` and `drift` all decide with it. See docs/windows.md.
 */

export type DesiredState = 'Active' | 'Stopped';

export interface WorkspaceDecision {
  readonly ws: SelectedWorkspace;
  readonly key: string;
  /** What the window wants; undefined when it wants nothing of this workspace now. */
  readonly desired: DesiredState | undefined;
  /** The status the listing shows. */
  readonly actual: string | undefined;
  /** The workspace differs from what is desired (a hold's wish included). */
  readonly drift: boolean;
  readonly hold: Hold | undefined;
  /** Whose pause it is, when nightshift owns it. */
  readonly owner: Ownership | undefined;
  /** What this reconciliation does; none when it leaves the workspace as it is. */
  readonly act: 'pause' | 'resume' | undefined;
  /** Why, in words for the run's records and `drift`. */
  readonly why: string;
  /**
   * Another window of the policy that also covers this workspace: it is left alone, and counts as
   * drift (nothing brings it to any state until the policy says which window it is under).
   */
  readonly conflict?: string;
  /**
   * The window itself would act on it now (a hold aside): what a period's edge keeps pending until
   * done, so a workspace held through the edge gets the period's action once its hold ends.
   */
  readonly owed: boolean;
}

export interface WindowDecision {
  /** Whether the instant is inside uptime, and the period key (`up@…`, `down@…`). */
  readonly up: boolean;
  readonly period: string;
  /** When the period began; undefined when uptime never changes. */
  readonly since: Date | undefined;
  /** This is the first reconciliation of the period: its edge is applied. */
  readonly newPeriod: boolean;
  readonly decisions: readonly WorkspaceDecision[];
}

export interface WindowDecisionInput {
  readonly name: string;
  readonly window: PolicyWindow;
  readonly now: Date;
  readonly workspaces: readonly SelectedWorkspace[];
  /** The whole listing, to find workspaces another window also covers. */
  readonly workgroups: readonly Workgroup[];
  readonly owned: ReadonlyMap<string, Ownership>;
  readonly holds: readonly Hold[] | undefined;
  readonly state: WindowState | undefined;
}

/** Running or on its way there; Stopping counts as stopped, so a pause under way is no drift. */
function normalize(status: string | undefined): DesiredState | undefined {
  if (status === STATUS.active || status === STATUS.resuming) return 'Active';
  if (status === STATUS.stopped || status === STATUS.stopping) return 'Stopped';
  return undefined;
}

/** The key of the period containing `now`: the same for every instant of one period. */
export function periodOf(
  window: PolicyWindow,
  now: Date,
): { up: boolean; since: Date | undefined; key: string } {
  const period = currentPeriod(window.uptime, now, window.timezone, window.skipDates);
  const key = `${period.up ? 'up' : 'down'}@${period.since?.toISOString() ?? 'always'}`;
  return { ...period, key };
}

export function decideWindow(input: WindowDecisionInput): WindowDecision {
  const { window, now, state } = input;
  const period = periodOf(window, now);
  const newPeriod = state?.period !== period.key;
  const pending = new Set(newPeriod ? [] : (state?.pending ?? []));
  const others = window.others.map(({ name, selector }) => ({
    name,
    keys: new Set(selectTargets(input.workgroups, selector).map((ws) => workspaceRef(ws).key)),
  }));

  const holdOn = input.holds ? holdLookup(input.holds, now) : undefined;
  const decisions = input.workspaces.map((ws): WorkspaceDecision => {
    const key = workspaceRef(ws).key;
    const actual = ws.status;
    const owner = input.owned.get(key);
    const base = { ws, key, actual, owner, hold: undefined, act: undefined, drift: false, owed: false };
    const other = others.find((candidate) => candidate.keys.has(key));
    if (other)
      return {
        ...base,
        desired: undefined,
        drift: true,
        conflict: other.name,
        why: `also under window ${other.name}: a workspace can be under one window only; left alone until the policy says which`,
      };
    const created = Date.parse(ws.workspace.created_at ?? '');
    if (window.grace > 0 && Number.isFinite(created) && now.getTime() - created < window.grace)
      return { ...base, desired: undefined, why: `created less than ${window.grace / 1000}s ago (grace)` };

    const own = windowWants(input, period.up, { edge: newPeriod, pending: pending.has(key) }, ws, owner);
    const hold = holdOn?.(ws);
    if (!hold) return { ...base, ...own, owed: own.act !== undefined };
    const desired: DesiredState = hold.state === 'active' ? 'Active' : 'Stopped';
    const off = normalize(actual) !== desired;
    const act = !off ? undefined : desired === 'Active' ? resumable(actual) : pausable(actual);
    return { ...base, hold, desired, drift: off, act, why: describeHold(hold), owed: own.act !== undefined };
  });
  return { up: period.up, period: period.key, since: period.since, newPeriod, decisions };
}

/**
 * What the window itself wants of a workspace, holds aside. `due.edge`: this is the period's first
 * reconciliation; `due.pending`: its edge left the workspace to do.
 */
function windowWants(
  input: WindowDecisionInput,
  up: boolean,
  due: { edge: boolean; pending: boolean },
  ws: SelectedWorkspace,
  owner: Ownership | undefined,
): Pick<WorkspaceDecision, 'desired' | 'act' | 'drift' | 'why'> {
  const { window } = input;
  const actual = ws.status;
  if (!up) {
    const desired: DesiredState = 'Stopped';
    if (normalize(actual) === 'Stopped')
      return { desired, act: undefined, drift: false, why: 'outside uptime: stopped' };
    if (actual === STATUS.active && (due.edge || due.pending || window.enforce))
      return { desired, act: 'pause', drift: true, why: pauseWhy(due.edge, due.pending) };
    return {
      desired,
      act: undefined,
      drift: true,
      why:
        actual === STATUS.active || actual === STATUS.resuming
          ? `${actual} outside uptime (started by hand?); enforce: false leaves it running`
          : `${actual ?? 'unknown'} outside uptime: left alone`,
    };
  }
  if (window.resume === 'none')
    return { desired: undefined, act: undefined, drift: false, why: 'in uptime; resume: none' };
  const ours = owner?.owner === input.name;
  if (window.resume === 'owned' && !ours)
    return { desired: undefined, act: undefined, drift: false, why: 'in uptime; not paused by this window' };
  const desired: DesiredState = 'Active';
  if (normalize(actual) === 'Active')
    return { desired, act: undefined, drift: false, why: 'in uptime: running' };
  if (actual === STATUS.stopped && (ours || due.edge || due.pending || window.enforce))
    return {
      desired,
      act: 'resume',
      drift: true,
      why: ours ? 'in uptime: resuming what the window paused' : 'in uptime: resuming (resume: all)',
    };
  return {
    desired,
    act: undefined,
    drift: true,
    why:
      actual === STATUS.stopped
        ? 'Stopped in uptime (stopped by hand?); enforce: false leaves it stopped'
        : `${actual ?? 'unknown'} in uptime: left alone until it settles`,
  };
}

function pauseWhy(newPeriod: boolean, pending: boolean): string {
  if (newPeriod) return 'outside uptime: pausing';
  if (pending) return 'outside uptime: pausing (left over from the period’s start)';
  return 'Active outside uptime: pausing again (enforce)';
}

function resumable(actual: string | undefined): 'resume' | undefined {
  return actual === STATUS.stopped ? 'resume' : undefined;
}

function pausable(actual: string | undefined): 'pause' | undefined {
  return actual === STATUS.active ? 'pause' : undefined;
}

/** What every window of a policy decides at one instant, as `nightshift drift` and the console show it. */
export interface FleetWindowsInput {
  readonly jobs: readonly PolicyJob[];
  readonly now: Date;
  readonly workgroups: readonly Workgroup[];
  readonly owned: ReadonlyMap<string, Ownership>;
  readonly holds: readonly Hold[] | undefined;
  readonly states: ReadonlyMap<string, WindowState>;
}

/** Each window of `jobs` with its decision over the workspaces its target selects from one listing. */
export function decideWindows(input: FleetWindowsInput): { job: PolicyJob; decision: WindowDecision }[] {
  return input.jobs.flatMap((job) => {
    if (!job.window || !job.target) return [];
    const decision = decideWindow({
      name: job.name,
      window: job.window,
      now: input.now,
      workspaces: selectTargets(input.workgroups, job.target.selector),
      workgroups: input.workgroups,
      owned: input.owned,
      holds: input.holds,
      state: input.states.get(job.name),
    });
    return [{ job, decision }];
  });
}
