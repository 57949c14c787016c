import type { ApiClient, Workgroup } from '../api/index.js';
import {
  decideWindows,
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
  return rows;
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

/** Whether a row counts against `drift`'s exit code: it is stranded, or it differs and no hold explains it. */
export function counts(row: DriftRow): boolean {
  return row.stranded !== null || (row.drift && row.hold === null);
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
