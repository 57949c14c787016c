import { z } from 'zod';
import type { Workspace } from '../../src/api/index.js';
import { type ActionContext, STATUS, type StepContext } from '../../src/engine/index.js';
import { answering, type DrillRecord, keepingRequestId, type RestoreCall } from './drill-record.js';
import { currentStatus, mutateUnlessAlready } from './workspace-state.js';

/** A count the restored workspace must show: exactly a number, or at least `min`. */
export const CountSchema = z.union([z.int().nonnegative(), z.strictObject({ min: z.int().nonnegative() })]);
export type Count = z.output<typeof CountSchema>;

/** What a restore drill restores, what it expects to see after, and how long each wait may take. */
export interface RestoreOrder {
  backupId: string;
  expect?: { vertices?: Count | undefined; edges?: Count | undefined } | undefined;
  waitReadyMs: number;
}

/** The workspace a drill restores into, as the fleet showed it when the run listed it. */
export interface DrilledWorkspace {
  workgroupId: string;
  workspaceId: string;
  label: string;
  status: string | undefined;
}

/** `12`, or `at least 12`. */
export function describeCount(count: Count): string {
  return typeof count === 'number' ? `${count}` : `at least ${count.min}`;
}

/** What is wrong with a count the restored workspace shows, if anything. */
function countProblem(
  label: string,
  expected: Count | undefined,
  observed: number | null,
): string | undefined {
  if (expected === undefined) return undefined;
  if (observed === null) return `${label} not reported (expected ${describeCount(expected)})`;
  const ok = typeof expected === 'number' ? observed === expected : observed >= expected.min;
  return ok ? undefined : `${label} ${observed} (expected ${describeCount(expected)})`;
}

/** One execution of the drill on its target: what its phases share. */
interface Drilling {
  ctx: ActionContext;
  order: RestoreOrder;
  target: DrilledWorkspace;
  step: StepContext;
  /** Filled as the drill goes, kept in the step's progress record. */
  record: DrillRecord;
  /** This execution's number among the executions of the drill. */
  execution: number;
  /** Waits (up to `waitReady`) until the workspace is `ready`, failing with "not <what>". */
  waitFor(ready: (ws: Workspace) => boolean, what: string): Promise<Workspace>;
}

/** How the drill tells its restore has gone through, and whether this execution watched it finish. */
interface RestoreWatch {
  restored: (ws: Workspace) => boolean;
  watching: boolean;
}

/**
 * Resumes (if paused), restores the backup, waits until the workspace is Active again with the
 * restored data, and checks its counts. Fills `record` as it goes (`execution` being this one's
 * number among the executions of the drill); throws when the drill fails.
 */
export async function drillRestore(
  ctx: ActionContext,
  order: RestoreOrder,
  target: DrilledWorkspace,
  step: StepContext,
  record: DrillRecord,
  execution: number,
): Promise<void> {
  const timeoutMs = order.waitReadyMs;
  const drilling: Drilling = {
    ctx,
    order,
    target,
    step,
    record,
    execution,
    waitFor: (ready, what) =>
      ctx.fleet.waitFor(target.workgroupId, target.workspaceId, ready, {
        timeoutMs,
        describe: `${target.label} not ${what} within ${Math.round(timeoutMs / 1000)}s`,
      }),
  };
  const status = await resumedIfPaused(drilling);
  const watch = await restoreOnce(drilling, status);
  await checkRestored(drilling, watch);
}

/** The workspace's status once a paused (or pausing) one is resumed and Active again. */
async function resumedIfPaused({
  ctx,
  target,
  step,
  record,
  waitFor,
}: Drilling): Promise<string | undefined> {
  const { workgroupId, workspaceId } = target;
  let status = await currentStatus(ctx, step, workgroupId, workspaceId, target.status);
  if (status === STATUS.stopping) {
    await waitFor((ws) => ws.status === STATUS.stopped, STATUS.stopped);
    status = STATUS.stopped;
  }
  if (status === STATUS.stopped) {
    record.resumedFirst = true;
    await mutateUnlessAlready(ctx, workgroupId, workspaceId, [STATUS.resuming, STATUS.active], () =>
      keepingRequestId(record.resumeRequestIds, () =>
        ctx.api.resumeWorkspace(workgroupId, workspaceId, { signal: step.signal }),
      ),
    );
    await step.progressRecord.write(record);
    status = STATUS.resuming;
  }
  if (status === STATUS.resuming) {
    await waitFor((ws) => ws.status === STATUS.active, STATUS.active);
    status = STATUS.active;
  }
  return status;
}

/**
 * Sends the restore unless an earlier attempt's (maybe another worker's) was accepted or has
 * visibly gone through, or one is under way: never restores twice. Says how to tell it is done.
 */
async function restoreOnce(drilling: Drilling, status: string | undefined): Promise<RestoreWatch> {
  const { ctx, target, step, record } = drilling;
  // The listing may still show the workspace Active from before the restore: only an Active
  // seen after Restoring, or on a record changed since the restore was sent, is the restored one.
  // Whoever sees it not yet restored, or hears the restore accepted, watches it finish.
  const seen = { restoring: false };
  const restoredSince = (over: NonNullable<DrillRecord['restoredOver']>) => (ws: Workspace) => {
    if (ws.status === STATUS.restoring) seen.restoring = true;
    const changed =
      (ws.version_number ?? null) !== over.version || (ws.last_modified_time ?? null) !== over.lastModified;
    return ws.status === STATUS.active && (seen.restoring || changed);
  };
  const over = record.restoredOver;
  const current = ctx.fleet.workspace(target.workgroupId, target.workspaceId);
  if (
    status === STATUS.active &&
    over &&
    (record.restoreAccepted || (current && restoredSince(over)(current)))
  ) {
    // an earlier attempt sent the restore and it was accepted, or it has gone through: wait for it
    return { restored: restoredSince(over), watching: false };
  }
  if (status === STATUS.restoring) {
    if (!over) record.restoreFoundUnderWay = true;
    record.restoreStartedAt ??= ctx.now().getTime();
    await step.progressRecord.write(record);
    return { restored: (ws) => ws.status === STATUS.active, watching: false };
  }
  if (status !== STATUS.active)
    throw new Error(
      `${target.label} is ${status ?? 'of unknown status'}; the drill needs it Active or Stopped`,
    );
  const sentOver = {
    version: current?.version_number ?? null,
    lastModified: current?.last_modified_time ?? null,
  };
  const watching = await sendRestore(drilling, sentOver);
  return { restored: restoredSince(sentOver), watching };
}

/** Sends the restore, recorded before the call; resolves with whether this execution's was accepted. */
async function sendRestore(
  { ctx, order, target, step, record, execution }: Drilling,
  sentOver: NonNullable<DrillRecord['restoredOver']>,
): Promise<boolean> {
  const { workgroupId, workspaceId } = target;
  // written before the call: a takeover knows it may have gone through, and when it went
  const call: RestoreCall = { execution, sentAt: ctx.now().getTime(), outcome: 'sent' };
  record.restoreStartedAt ??= call.sentAt;
  record.restoredOver = sentOver;
  record.restoreCalls.push(call);
  await step.progressRecord.write(record);
  const already = await mutateUnlessAlready(ctx, workgroupId, workspaceId, [STATUS.restoring], () =>
    keepingRequestId(record.restoreRequestIds, () =>
      answering(call, ctx.now, () =>
        ctx.api.restoreBackup(workgroupId, workspaceId, order.backupId, { signal: step.signal }),
      ),
    ),
  );
  if (already) {
    record.restoreFoundUnderWay = true;
    call.outcome = 'already-restoring';
  } else {
    record.restoreAcceptedAt = call.answeredAt;
    record.restoreAcceptedBy = execution;
  }
  record.restoreAccepted = true;
  await step.progressRecord.write(record);
  return !already;
}

/** Waits for the restored workspace, records what it shows, and fails the drill on counts that differ. */
async function checkRestored(
  { ctx, order, target, step, record, execution, waitFor }: Drilling,
  watch: RestoreWatch,
) {
  let { watching } = watch;
  const workspace = await waitFor((ws) => {
    const done = watch.restored(ws);
    if (!done) watching = true;
    return done;
  }, `restored (${STATUS.active})`);
  // an earlier execution that saw it first saw it sooner
  if (record.restoredAt === undefined) {
    record.restoredAt = ctx.now().getTime();
    record.restoredBy = execution;
    record.restoreWatched = watching;
  }
  const observed = { vertices: workspace.vertex_count ?? null, edges: workspace.edge_count ?? null };
  record.observed = observed;
  await step.progressRecord.write(record);
  const problems = [
    countProblem('vertices', order.expect?.vertices, observed.vertices),
    countProblem('edges', order.expect?.edges, observed.edges),
  ].filter((problem): problem is string => problem !== undefined);
  if (problems.length > 0) {
    const message = `restored ${target.label} from ${order.backupId} shows ${problems.join(', ')}`;
    record.countMismatch = message;
    throw new Error(message);
  }
}
