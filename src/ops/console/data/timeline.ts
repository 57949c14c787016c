import { holdFor, type Ownership } from '../../../engine/index.js';
import type { TimelineEvent, WorkspaceTimelineView } from '../model.js';
import type { FleetData } from './fleet.js';
import type { ConsoleSources } from './sources.js';

/**
 * How many of the fleet's newest closed pauses a timeline looks through for the workspace's own
 * (they are kept by when they ended, for the whole fleet): about the last two edges of a
 * 1,000-workspace fleet, weeks of a small one.
 */
export const CLOSED_PAUSES_SCANNED = 2_000;
/** The holds log keeps the last 1,000 events (src/store/holds.ts): all of them are looked at. */
const HOLD_EVENTS = 1_000;

const PAUSED = ['Stopped', 'Stopping'];

function ownedPause(record: Ownership): TimelineEvent {
  return {
    kind: 'pause',
    at: record.pausedAt ?? record.intendedAt,
    owner: record.owner,
    ownerKind: record.ownerKind,
    runId: record.runId,
    state: record.state,
    until: null,
    endedBy: null,
    requestId: record.requestId ?? null,
  };
}

/**
 * `/fleet/<workgroupId>/<workspaceId>`: the workspace as the fleet page shows it, and who paused,
 * resumed or held it, when, under which run or hold, newest first. Every source is read bounded
 * (a few keys of the workspace, the newest closed pauses, the holds log); never an API call.
 * Undefined when nothing at all is known of the workspace.
 */
export async function timelineView(
  sources: ConsoleSources,
  fleet: FleetData,
  workgroupId: string,
  workspaceId: string,
): Promise<WorkspaceTimelineView | undefined> {
  const now = sources.now?.() ?? new Date();
  const key = `${workgroupId}/${workspaceId}`;
  const [view, runs, { owned, journal }, closed, holdLog] = await Promise.all([
    fleet.view({ workgroup: workgroupId }),
    sources.timeline.runs(key),
    sources.timeline.ownership(key),
    sources.timeline.closedPauses(key, CLOSED_PAUSES_SCANNED),
    sources.state.holds.log(HOLD_EVENTS),
  ]);
  const group = view.workgroups.find((wg) => wg.id === workgroupId);
  const current = group?.workspaces.find((ws) => ws.id === workspaceId);
  const names = {
    workgroupId,
    workspaceId,
    workgroupName: group?.name ?? owned?.workgroupName ?? journal?.workgroupName,
    workspaceName: current?.name ?? owned?.workspaceName ?? journal?.workspaceName,
  };
  const events: TimelineEvent[] = [
    ...runs.map(
      (run): TimelineEvent => ({
        kind: 'run',
        at: run.at,
        job: run.job,
        action: run.action,
        runId: run.runId,
        outcome: run.outcome,
        reason: run.reason ?? null,
        error: run.error ?? null,
        requestIds: run.requestIds,
      }),
    ),
    ...(owned ? [ownedPause(owned)] : []),
    ...closed.pauses.map(
      (pause): TimelineEvent => ({
        kind: 'pause',
        at: pause.to,
        owner: pause.owner,
        ownerKind: pause.ownerKind,
        runId: null,
        state: 'confirmed',
        until: pause.to,
        endedBy: pause.endedBy,
        requestId: null,
      }),
    ),
    ...holdLog
      // the hold as it was placed covered the workspace (its own time, so an ended one matches)
      .filter((entry) => holdFor([entry.hold], names, new Date(entry.hold.createdAt)))
      .map(
        (entry): TimelineEvent => ({
          kind: 'hold',
          at: entry.at,
          event: entry.event,
          pattern: entry.hold.pattern,
          state: entry.hold.state,
          until: entry.hold.until,
          by: entry.by ?? entry.hold.by,
          reason: entry.hold.reason,
        }),
      ),
  ].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  if (!current && events.length === 0 && !journal) return undefined;
  return {
    generatedAt: now.toISOString(),
    workgroupId,
    workspaceId,
    now: current && group ? { ...current, workgroupName: group.name } : null,
    listing: view.listing,
    journal: journal
      ? {
          owner: journal.owner,
          ownerKind: journal.ownerKind,
          runId: journal.runId,
          at: journal.pausedAt ?? journal.intendedAt,
        }
      : null,
    stranded: Boolean(journal && !owned && current && PAUSED.includes(current.state)),
    events,
    scope: {
      runsKept: runs.length,
      closedPausesScanned: closed.scanned,
      holdEventsScanned: holdLog.length,
    },
  };
}
