import type { ApiClient, Workgroup } from '../api/index.js';
import {
  decideWindows,
  type Hold,
  holdCoverage,
  holdLookup,
  honoursHolds,
  type Ownership,
  type SavingsReport,
  STATUS,
  savingsReport,
  strandedFinding,
} from '../engine/index.js';
import type { Policy } from '../policy/index.js';
import type { RedisFleetState, RedisOwnershipLedger } from '../store/index.js';

/** One workspace under a window (or stranded outside every window), as `nightshift drift` shows it. */
export interface DriftRow {
  /** Null for a stranded workspace no window covers (a pause job's). */
  window: string | null;
  workgroup: string;
  workspace: string;
  workgroupId: string;
  workspaceId: string;
  /** What the window (or a hold) wants now; null when it wants nothing of the workspace. */
  desired: 'Active' | 'Stopped' | null;
  actual: string | null;
  drift: boolean;
  /** Whose pause nightshift owns, and since when. */
  owner: { kind: 'job' | 'window'; name: string; since: string; state: 'intent' | 'confirmed' } | null;
  /** The hold in force on it, and the pattern it was placed on (what `nightshift release` takes). */
  hold: { pattern: string; state: string; until: string; by: string; reason: string } | null;
  /**
   * Paused by nightshift (the pause journal holds its pause) and owned by nobody: nothing would
   * hand it back. `nightshift adopt <owner>` makes the owner own it again.
   */
  stranded: {
    kind: 'job' | 'window';
    owner: string;
    runId: string;
    since: string;
    requestId: string | null;
  } | null;
  why: string;
}

/**
 * Every workspace under every window of `policy`, with what its window wants and what it is: one
 * listing of the fleet, and the ledger, holds and window states from Redis.
 */
export async function driftRows(
  policy: Policy,
  api: ApiClient,
  state: RedisFleetState,
  now: Date,
): Promise<DriftRow[]> {
  const [{ result: workgroups }, owned, holds, states, journal] = await Promise.all([
    api.listWorkgroups(),
    state.ledger.all(),
    state.holds.active(now, { readOnly: true }),
    state.windows.all(),
    state.ledger.journal(),
  ]);
  const stranded = strandedIn(workgroups, owned, journal);
  const rows = decideWindows({ jobs: policy.jobs, now, workgroups, owned, holds, states }).flatMap(
    ({ job, decision }) =>
      decision.decisions.map((d): DriftRow => {
        const entry = d.conflict === undefined ? stranded.get(d.key)?.entry : undefined;
        stranded.delete(d.key);
        return {
          window: job.name,
          workgroup: d.ws.workgroupName,
          workspace: d.ws.workspaceName,
          workgroupId: d.ws.workgroupId,
          workspaceId: d.ws.workspaceId,
          desired: d.desired ?? null,
          actual: d.actual ?? null,
          drift: d.drift,
          owner: d.owner
            ? {
                kind: d.owner.ownerKind,
                name: d.owner.owner,
                since: d.owner.pausedAt ?? d.owner.intendedAt,
                state: d.owner.state,
              }
            : null,
          hold: d.hold
            ? {
                pattern: d.hold.pattern,
                state: d.hold.state,
                until: d.hold.until,
                by: d.hold.by,
                reason: d.hold.reason,
              }
            : null,
          stranded: entry ? strandedOf(entry) : null,
          why: entry ? strandedFinding(entry).message : d.why,
        };
      }),
  );
  // stranded where no window looks: a pause job's pauses
  for (const [, { entry, actual }] of stranded)
    rows.push({
      window: null,
      workgroup: entry.workgroupName ?? entry.workgroupId,
      workspace: entry.workspaceName ?? entry.workspaceId,
      workgroupId: entry.workgroupId,
      workspaceId: entry.workspaceId,
      desired: null,
      actual,
      drift: false,
      owner: null,
      hold: null,
      stranded: strandedOf(entry),
      why: strandedFinding(entry).message,
    });
  rows.push(...heldUnacted(policy, workgroups, holds, now, new Set(rows.map(rowKey))));
  return rows;
}

function rowKey(row: DriftRow): string {
  return `${row.workgroupId}/${row.workspaceId}`;
}

/**
 * Held workspaces that no window covers and no pause or resume job targets: nothing brings them to
 * the held state, so the hold changes nothing there. Each is a row (`window: null`), differing when
 * its status is not the held one.
 */
function heldUnacted(
  policy: Policy,
  workgroups: readonly Workgroup[],
  holds: readonly Hold[],
  now: Date,
  listed: ReadonlySet<string>,
): DriftRow[] {
  if (holds.length === 0) return [];
  const holdOn = holdLookup(holds, now);
  const coverage = holdCoverage(policy.jobs, workgroups);
  const rows: DriftRow[] = [];
  for (const group of workgroups)
    for (const ws of group.workspaces ?? []) {
      const [workgroupId, workspaceId] = [group.workgroup_id ?? '', ws.workspace_id ?? ''];
      const key = `${workgroupId}/${workspaceId}`;
      if (listed.has(key)) continue;
      const names = {
        workgroupId,
        workgroupName: group.name ?? undefined,
        workspaceId,
        workspaceName: ws.name ?? undefined,
      };
      const hold = holdOn(names);
      if (!hold || honoursHolds(coverage(key))) continue;
      const desired = hold.state === 'active' ? 'Active' : 'Stopped';
      const actual = ws.status ?? null;
      const drift = settled(actual) !== desired;
      rows.push({
        window: null,
        workgroup: group.name ?? workgroupId,
        workspace: ws.name ?? workspaceId,
        workgroupId,
        workspaceId,
        desired,
        actual,
        drift,
        owner: null,
        hold: {
          pattern: hold.pattern,
          state: hold.state,
          until: hold.until,
          by: hold.by,
          reason: hold.reason,
        },
        stranded: null,
        why: `held ${hold.state} (${hold.pattern}), but no window covers it and no pause or resume job targets it: ${drift ? `nothing brings it to ${desired}` : 'the hold changes nothing here'}`,
      });
    }
  return rows;
}

/** Running or on its way, stopped or on its way: a transition under way is no drift. */
function settled(status: string | null): 'Active' | 'Stopped' | undefined {
  if (status === STATUS.active || status === STATUS.resuming) return 'Active';
  if (status === STATUS.stopped || status === STATUS.stopping) return 'Stopped';
  return undefined;
}

/**
 * Paused workspaces of the listing that nobody owns and the pause journal says nightshift paused,
 * by key, with the status the listing shows.
 */
function strandedIn(
  workgroups: readonly Workgroup[],
  owned: ReadonlyMap<string, Ownership>,
  journal: ReadonlyMap<string, Ownership>,
): Map<string, { entry: Ownership; actual: string }> {
  const found = new Map<string, { entry: Ownership; actual: string }>();
  for (const workgroup of workgroups)
    for (const ws of workgroup.workspaces ?? []) {
      const key = `${workgroup.workgroup_id}/${ws.workspace_id}`;
      const entry = journal.get(key);
      const paused = ws.status === STATUS.stopped || ws.status === STATUS.stopping;
      if (entry && paused && !owned.has(key)) found.set(key, { entry, actual: ws.status as string });
    }
  return found;
}

function strandedOf(entry: Ownership): NonNullable<DriftRow['stranded']> {
  return {
    kind: entry.ownerKind,
    owner: entry.owner,
    runId: entry.runId,
    since: entry.pausedAt ?? entry.intendedAt,
    requestId: entry.requestId ?? null,
  };
}

/**
 * Whether a row counts against `drift`'s exit code: it is stranded, it differs and no hold explains
 * it, or it is held, differs from its hold and nothing of the policy acts on it.
 */
export function counts(row: DriftRow): boolean {
  return row.stranded !== null || (row.drift && (row.hold === null || row.window === null));
}

/** Owned paused time and its estimated cost between `since` and `until`. */
export async function savingsSince(
  ledger: RedisOwnershipLedger,
  since: Date,
  until: Date,
): Promise<SavingsReport> {
  const [intervals, owned] = await Promise.all([ledger.intervalsSince(since), ledger.all()]);
  return savingsReport(intervals, owned.values(), since, until);
}
