import type { ApiClient } from '../api/index.js';
import { decideWindows, type SavingsReport, savingsReport } from '../engine/index.js';
import type { Policy } from '../policy/index.js';
import type { RedisFleetState, RedisOwnershipLedger } from '../store/index.js';

/** One workspace under a window, as `nightshift drift` shows it. */
export interface DriftRow {
  window: string;
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
  hold: { state: string; until: string; by: string; reason: string } | null;
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
  if (!policy.jobs.some((job) => job.window)) return [];
  const [{ result: workgroups }, owned, holds, states] = await Promise.all([
    api.listWorkgroups(),
    state.ledger.all(),
    state.holds.active(now, { readOnly: true }),
    state.windows.all(),
  ]);
  return decideWindows({ jobs: policy.jobs, now, workgroups, owned, holds, states }).flatMap(
    ({ job, decision }) =>
      decision.decisions.map((d) => ({
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
          ? { state: d.hold.state, until: d.hold.until, by: d.hold.by, reason: d.hold.reason }
          : null,
        why: d.why,
      })),
  );
}

/** Whether a row counts against `drift`'s exit code: it differs, and no hold explains it. */
export function counts(row: DriftRow): boolean {
  return row.drift && row.hold === null;
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
