import { z } from 'zod';
import type { Workgroup, Workspace } from '../src/api/index.js';
import {
  type Action,
  DurationSchema,
  STATUS,
  type StepResult,
  type TargetRef,
  willRetry,
} from '../src/engine/index.js';
import { findWorkgroup, findWorkspace, type Named, NotFoundInFleetError } from './support/by-name-or-id.js';
import { pauseAfterwards } from './support/drill-afterwards.js';
import {
  type DrillRecord,
  DrillRecordSchema,
  type DrillSubject,
  describeError,
  drillEvidence,
  newDrillRecord,
  recordedRequestIds,
  timeToRestoreMs,
} from './support/drill-record.js';
import { CountSchema, describeCount, drillRestore, type RestoreOrder } from './support/drill-restore.js';

/**
 * Restoring replaces the workspace's data, so the drill acts on one workspace named exactly: a
 * glob could one day match a workspace whose data matters. This is what lets the action stay
 * non-destructive (no `confirm:`): it only ever overwrites the workspace a person named for drills.
 */
const NO_GLOB = /^[^*?[\]{}!]+$/;
const GLOB_REFUSED = 'exactly (a name or an id); globs are refused because a restore overwrites data';
const exactName = (what: string) => z.string().regex(NO_GLOB, `name one ${what} ${GLOB_REFUSED}`);

const params = z.strictObject({
  workgroup: exactName('workgroup').meta({ description: "The drill workspace's workgroup, by name or id." }),
  workspace: exactName('workspace').meta({
    description: 'The workspace to restore into, by name or id; the backup replaces its data.',
  }),
  backupId: z.string().min(1).meta({ description: 'The backup to restore: a backup of that workspace.' }),
  expect: z
    .strictObject({
      vertices: CountSchema.optional().meta({ description: 'A number (exact) or { min: N }.' }),
      edges: CountSchema.optional().meta({ description: 'A number (exact) or { min: N }.' }),
    })
    .optional()
    .meta({ description: 'Counts the restored workspace must show; a mismatch fails the drill.' }),
  waitReady: DurationSchema.optional().meta({
    description: 'How long each wait (for the resume, for the restore) may take.',
    default: '30m',
  }),
  afterwards: z.enum(['pause', 'leave']).optional().meta({
    description: 'pause the workspace when the drill ends, passed or failed; leave it as it is.',
    default: 'pause',
  }),
});
type Params = z.output<typeof params>;

const DEFAULT_WAIT_MS = 30 * 60_000;
const TWO_WAITS = "a paused drill workspace's resume, then the restore, each up to waitReady (default 30m)";
const AFTERWARDS_WORDS = {
  paused: 'paused afterwards',
  'already-paused': 'already paused',
  'not-paused': 'not paused',
  left: 'left as it is',
} as const;

interface DrillTarget {
  ref: TargetRef;
  /** Set when the workgroup or workspace named in `with:` is not in the fleet. */
  problem?: string;
  workgroupId: string;
  workspaceId: string;
  label: string;
  status: string | undefined;
}

/** Where the names in `with:` point; a name that finds nothing (or two things) becomes the target's problem. */
function resolveTarget(workgroups: readonly Workgroup[], { workgroup, workspace }: Params): DrillTarget {
  let wg: Named<Workgroup>;
  let ws: Named<Workspace>;
  try {
    wg = findWorkgroup(workgroups, workgroup);
    ws = findWorkspace(wg, workspace);
  } catch (error) {
    if (!(error instanceof NotFoundInFleetError)) throw error;
    return {
      ref: { key: `${workgroup}/${workspace}`, workgroupName: workgroup, workspaceName: workspace },
      problem: error.message,
      workgroupId: workgroup,
      workspaceId: workspace,
      label: `${workgroup}/${workspace}`,
      status: undefined,
    };
  }
  return {
    ref: {
      key: `${wg.id}/${ws.id}`,
      workgroupId: wg.id,
      workgroupName: wg.name,
      workspaceId: ws.id,
      workspaceName: ws.name,
    },
    workgroupId: wg.id,
    workspaceId: ws.id,
    label: `${wg.name}/${ws.name}`,
    status: ws.record.status ?? undefined,
  };
}

function describePlan(target: DrillTarget, p: Params): string {
  const before: Record<string, string> = {
    [STATUS.active]: '',
    [STATUS.stopped]: 'resume (Stopped), ',
    [STATUS.stopping]: 'wait until Stopped, resume, ',
    [STATUS.resuming]: 'wait until Active (Resuming), ',
  };
  const expected = [
    p.expect?.vertices === undefined ? '' : `vertices ${describeCount(p.expect.vertices)}`,
    p.expect?.edges === undefined ? '' : `edges ${describeCount(p.expect.edges)}`,
  ].filter(Boolean);
  const check = expected.length > 0 ? `, check ${expected.join(' and ')}` : ', record the counts';
  const then = (p.afterwards ?? 'pause') === 'pause' ? ', then pause it' : ', then leave it running';
  const status = target.status ?? 'unknown';
  if (status === STATUS.restoring) {
    return `would wait for the restore under way (not restore again)${check}${then}`;
  }
  const prefix = before[status];
  // the run would fail on it: so does the plan, with the run's own words
  if (prefix === undefined)
    throw new Error(`${target.label} is ${status}; the drill needs it Active or Stopped`);
  return `would ${prefix}restore ${p.backupId}${check}${then}`;
}

/** What the drill's parameters ask of the restore. */
function restoreOrder(p: Params): RestoreOrder {
  return { backupId: p.backupId, expect: p.expect, waitReadyMs: p.waitReady ?? DEFAULT_WAIT_MS };
}

/** What the evidence names as drilled. */
function subjectOf(target: DrillTarget, p: Params): DrillSubject {
  return {
    backupId: p.backupId,
    workgroupId: target.ref.workgroupId ?? null,
    workgroupName: target.ref.workgroupName ?? p.workgroup,
    workspaceId: target.ref.workspaceId ?? null,
    workspaceName: target.ref.workspaceName ?? p.workspace,
    expected: p.expect ?? null,
    problem: target.problem,
  };
}

/** The succeeded step's reason: `restored bk-… in 4.2s; paused afterwards`, saying so when no time was measured. */
function restoredReason(p: Params, record: DrillRecord, afterwards: keyof typeof AFTERWARDS_WORDS): string {
  const ms = timeToRestoreMs(record);
  const took =
    ms === null
      ? ' (time to restore unknown: no execution watched it finish)'
      : ` in ${Math.round(ms / 100) / 10}s`;
  return `restored ${p.backupId}${took}; ${AFTERWARDS_WORDS[afterwards]}`;
}

/** Restores a backup into a workspace kept for drills and proves it comes back with the right data. */
export const restoreDrill: Action<typeof params> = {
  name: 'restore-drill',
  description: 'Restore a backup into a drill workspace, check its counts, record time to restore.',
  destructive: false,
  scope: 'none',
  params,
  longestWait: (p) => ({ ms: 2 * (p.waitReady ?? DEFAULT_WAIT_MS), why: TWO_WAITS }),
  example: `version: 1
jobs:
  weekly-restore-drill:
    description: Prove last night's backup restores, then pause the drill workspace again
    schedule: "0 6 * * 1"
    timezone: Europe/Berlin
    action: restore-drill
    timeout: 2h
    retry: { attempts: 3, backoff: 1m }
    with:
      workgroup: ops
      workspace: drill
      backupId: bk-3f9a1c2e
      expect:
        vertices: { min: 1000000 }
        edges: { min: 5000000 }
      waitReady: 45m
      afterwards: pause
`,

  async plan(ctx, p) {
    const target = resolveTarget(ctx.fleet.workgroups, p);
    await ctx.forEachTarget(
      [target],
      (t) => t.ref,
      async (t): Promise<StepResult> => {
        if (t.problem) throw new Error(t.problem);
        return {
          outcome: 'planned',
          reason: describePlan(t, p),
          detail: { backupId: p.backupId, status: t.status ?? null, afterwards: p.afterwards ?? 'pause' },
        };
      },
    );
  },

  async run(ctx, p) {
    const target = resolveTarget(ctx.fleet.workgroups, p);
    const pauseAfter = (p.afterwards ?? 'pause') === 'pause';
    const record = newDrillRecord();
    // this execution's number among those that worked on the drill (a takeover's is 2 or more)
    let execution: number | undefined;
    // why the drill failed, as thrown in this process (an earlier worker's is known by its message)
    let failure: unknown;
    const settle = async (): Promise<unknown> => {
      if (!pauseAfter) {
        record.afterwards = { requested: 'leave', outcome: 'left' };
        return undefined;
      }
      const { afterwards, error } = await pauseAfterwards(ctx, target);
      record.afterwards = afterwards;
      return error;
    };

    try {
      await ctx.forEachTarget(
        [target],
        (t) => t.ref,
        async (t, step): Promise<StepResult> => {
          if (t.problem) throw new Error(t.problem);
          Object.assign(record, await step.progressRecord.read(DrillRecordSchema));
          if (execution === undefined) {
            record.executions += 1;
            execution = record.executions;
          }
          record.attempts += 1;
          record.startedAt ??= ctx.now().toISOString();
          await step.progressRecord.write(record);
          if (!record.verdict) {
            const error = await drillRestore(ctx, restoreOrder(p), t, step, record, execution).then(
              () => undefined,
              (thrown: unknown) => thrown ?? new Error('the drill failed'),
            );
            if (error !== undefined) record.lastFailure = describeError(error);
            if (error === undefined) record.verdict = { passed: true };
            // what the engine retries is its to retry; if its retries run out, run() pauses
            else if (!willRetry(error, ctx.signal)) {
              failure = error;
              record.verdict = { passed: false, failure: describeError(error) };
            }
            // kept either way: the next attempt's record has the failed call's request ID
            await step.progressRecord.write(record);
            if (!record.verdict) throw error;
          }
          const pauseError = await settle();
          await step.progressRecord.write(record);
          // a transient pause failure retries the step, which goes straight back to the pause
          if (willRetry(pauseError, ctx.signal)) throw pauseError;
          if (!record.verdict.passed) throw failure ?? new Error(record.verdict.failure);
          if (pauseError) throw pauseError;
          const afterwards = record.afterwards?.outcome ?? 'left';
          return {
            outcome: 'succeeded',
            reason: restoredReason(p, record, afterwards),
            detail: {
              backupId: p.backupId,
              timeToRestoreMs: timeToRestoreMs(record),
              vertices: record.observed?.vertices ?? null,
              edges: record.observed?.edges ?? null,
              afterwards,
            },
            // an earlier execution's calls are in the record, not in this execution's request IDs
            earlierRequestIds: recordedRequestIds(record),
          };
        },
      );
    } finally {
      // Findings are reported here, outside the step: a step's findings are kept only when it succeeds.
      if (record.countMismatch) {
        ctx.finding({
          rule: 'restore-drill/count-mismatch',
          severity: 'critical',
          subject: target.label,
          message: record.countMismatch,
        });
      }
      if (!target.problem && record.attempts > 0) {
        // The step never settled (transient failures outlasted the retries): pause here, once.
        if (!record.afterwards) await settle();
        if (record.afterwards?.outcome === 'not-paused') {
          ctx.finding({
            rule: 'restore-drill/left-running',
            severity: 'warning',
            subject: target.label,
            message: `${target.label} was not paused after the drill: ${record.afterwards.reason ?? 'unknown'}`,
          });
        }
      }
      if (record.attempts > 0 || target.problem) ctx.evidence(drillEvidence(subjectOf(target, p), record));
    }
  },
};
