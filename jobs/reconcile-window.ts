import { z } from 'zod';
import {
  type Action,
  type ActionContext,
  decideWindow,
  driftStreakEvidence,
  type Finding,
  nextDriftStreak,
  type PlanContext,
  type StepContext,
  type StepResult,
  sharedOut,
  strandedFinding,
  type TargetRecord,
  WINDOW_ACTION,
  type WindowActed,
  type WindowDecision,
  type WindowEvidence,
  type WindowState,
  type WorkspaceDecision,
  windowActed,
  workspaceRef,
} from '../src/engine/index.js';
import { earlierPause, PAUSED, pauseStep, resumeStep } from './support/owned-steps.js';

const params = z.strictObject({});

/**
 * One reconciliation of a window: brings its workspaces to the state the window (or a hold)
 * wants now, and reports the ones it leaves different (drift). Workspaces already as wanted get
 * no record, no write and no call: a quiet window over 10,000 workspaces costs one listing.
 */
export const reconcileWindow: Action<typeof params> = {
  name: WINDOW_ACTION,
  description: 'Reconcile a window: pause outside uptime, resume in it, report drift.',
  destructive: false,
  scope: 'workspace',
  params,
  example: '',

  async plan(ctx) {
    const decision = await decide(ctx, await ctx.windowStates?.get(ctx.job.name));
    reportConflicts(ctx, decision);
    if (ctx.ownership && ctx.windowStates) {
      await ctx.forEachTarget(
        reported(decision),
        (d) => workspaceRef(d.ws),
        async (d) => plannedStep(d),
      );
    } else {
      // without Redis neither who paused what nor whether this period's edge was applied is known
      const unknown = decision.decisions.filter(
        (d) => d.act || d.drift || d.conflict || unsureResume(ctx, decision, d),
      );
      await ctx.forEachTarget(
        unknown,
        (d) => workspaceRef(d.ws),
        async (d) => plannedWithoutRedis(ctx, decision, d),
      );
      ctx.evidence({ ledger: 'unknown without Redis (REDIS_URL): ownership and the period already applied' });
    }
    ctx.evidence({ window: evidence(decision, undefined) });
  },

  // an edge over a large fleet is shared out: the parts make its pauses and resumes; the
  // reconciliation decides, writes the edge first, and settles the window's state once they ended
  // (a run taken over after it split waits for the parts it made, which may still be acting, and
  // works none of their workspaces itself)
  async split(ctx, _params, partSize, resuming) {
    const begun = await begin(ctx);
    const acting = begun.decision.decisions.filter((d) => d.act !== undefined);
    if (!resuming && acting.length <= partSize) return undefined;
    reportConflicts(ctx, begun.decision);
    const pending = await recordEdge(ctx, begun);
    await settleLedger(ctx, begun.decision);
    const all = begun.decision.decisions.map((d) => d.ws);
    return {
      targets: sharedOut(
        all,
        acting.map((d) => d.ws),
        resuming,
      ),
      finish: async (records) => {
        const rest = await ctx.forEachTarget(
          [
            ...reported(begun.decision).filter((d) => d.act === undefined),
            ...byEarlierExecution(begun.decision, ctx),
          ].filter((d) => !records.has(d.key)),
          (d) => workspaceRef(d.ws),
          (d, step) => act(ctx, d, step),
          PIPELINED,
        );
        await settle(ctx, begun, pending, [...records.values(), ...rest]);
      },
    };
  },

  async run(ctx) {
    const begun = await begin(ctx);
    if (ctx.part) {
      // one part of a split edge: the run wrote the edge and settles the window; this part acts,
      // and records what an earlier execution of it paused before its checkpoints (else the run
      // would count those as targets no part finished)
      await ctx.forEachTarget(
        [
          ...begun.decision.decisions.filter((d) => d.act !== undefined),
          ...byEarlierExecution(begun.decision, ctx),
        ],
        (d) => workspaceRef(d.ws),
        (d, step) => act(ctx, d, step),
        PIPELINED,
      );
      return;
    }
    reportConflicts(ctx, begun.decision);
    const pending = await recordEdge(ctx, begun);
    await settleLedger(ctx, begun.decision);
    const records = await ctx.forEachTarget(
      [...reported(begun.decision), ...byEarlierExecution(begun.decision, ctx)],
      (d) => workspaceRef(d.ws),
      (d, step) => act(ctx, d, step),
      PIPELINED,
    );
    await settle(ctx, begun, pending, records);
  },
};

/** A window's steps are pauses and resumes it does not wait for: a call with Redis writes around it. */
const PIPELINED = { pipelined: true };

/** What a reconciliation decides at its start, with the window's state as it found it. */
interface Begun {
  decision: WindowDecision;
  state: WindowState | undefined;
  ownership: NonNullable<ActionContext['ownership']>;
  windowStates: NonNullable<ActionContext['windowStates']>;
}

async function begin(ctx: ActionContext): Promise<Begun> {
  const { ownership, windowStates } = ctx;
  if (!ownership || !windowStates)
    throw new Error(
      'a window needs Redis (set REDIS_URL, or let a worker run it): its ownership ledger and state live there',
    );
  const state = await windowStates.get(ctx.job.name);
  return { decision: await decide(ctx, state), state, ownership, windowStates };
}

/**
 * Durable intent: what the period's edge decided is written before anything is done, so a crash
 * leaves it pending for the next reconciliation instead of forgotten. Resolves with what the edge
 * (or an earlier one of this period) left to do.
 */
async function recordEdge(
  ctx: ActionContext,
  { decision, state, windowStates }: Begun,
): Promise<Set<string>> {
  const pending = new Set(
    decision.newPeriod ? decision.decisions.filter((d) => d.owed).map((d) => d.key) : (state?.pending ?? []),
  );
  // (an edge that owes nothing has nothing to lose: its period is recorded at the end)
  if (decision.newPeriod && pending.size > 0)
    await windowStates.save(ctx.job.name, { period: decision.period, pending: [...pending] });
  return pending;
}

/** What the listing says of pauses on record that the reconciliation does not act on. */
async function settleLedger(ctx: ActionContext, decision: WindowDecision): Promise<void> {
  const { ownership } = ctx;
  if (!ownership) return;
  const listing = ctx.fleet.first;
  for (const d of decision.decisions) {
    // running as wanted: whatever pause was recorded for it was undone, or never took
    if (d.owner && d.act === undefined && d.actual && ['Active', 'Resuming'].includes(d.actual))
      await ownership.seenRunning(d.key, listing);
    // paused, and this window's intent came first: the intent's call made the pause
    else if (
      d.owner &&
      pausedBy(d, ctx.job.name) &&
      d.owner.state === 'intent' &&
      d.owner.runId !== ctx.runId &&
      (d.owner.intentSeq ?? 0) <= (listing.seq ?? -1)
    )
      await ownership.confirm(d.key, undefined, d.owner.intendedAt);
  }
}

/** The keys of the records that succeeded, in this execution or an earlier one of the run. */
function succeededIn(records: readonly TargetRecord[]): Set<string> {
  return new Set(records.filter((record) => record.outcome === 'succeeded').map((record) => record.key));
}

/**
 * The window's state once the reconciliation had its way: what the period's edge owes a workspace
 * is paid once the window acted on it (a held one keeps its debt until its hold ends); stranded
 * workspaces reported; the drift streak carried on; the state written unless it is what the last
 * reconciliation found. Its evidence says what it did (the `acted` notification's counts).
 */
async function settle(
  ctx: ActionContext,
  begun: Begun,
  pending: Set<string>,
  records: readonly TargetRecord[],
) {
  const { decision, state, windowStates } = begun;
  const done = succeededIn(records);
  const stranded = await strandedOf(ctx, decision);
  for (const finding of stranded) ctx.finding(finding);
  for (const d of decision.decisions) {
    if (!d.hold && (done.has(d.key) || d.act === undefined)) pending.delete(d.key);
  }
  const found = { ...evidence(decision, done), stranded: stranded.length };
  const streak = nextDriftStreak(state?.driftStreak, drifting(decision, done), ctx.now());
  const settled: WindowState = {
    period: decision.period,
    pending: [...pending],
    workspaces: found.workspaces,
    drift: found.drift,
    held: found.held,
    stranded: found.stranded,
    ...(streak ? { driftStreak: streak } : {}),
  };
  // a reconciliation that found what the last one found writes nothing
  const before = decision.newPeriod ? undefined : state;
  if (!before || JSON.stringify(before) !== JSON.stringify(settled))
    await windowStates.save(ctx.job.name, settled);
  const report: WindowEvidence = {
    ...found,
    done: await actedBy(ctx, decision, records),
    ...(streak ? { driftStreak: driftStreakEvidence(streak) } : {}),
    driftPersistsAfter: windowOf(ctx).driftPersistsAfter,
  };
  ctx.evidence({ window: report });
}

/** What the reconciliation paused and resumed, its pauses priced by the ledger's records of them. */
async function actedBy(
  ctx: ActionContext,
  decision: WindowDecision,
  records: readonly TargetRecord[],
): Promise<WindowActed> {
  const byKey = new Map(decision.decisions.map((d) => [d.key, d]));
  const targets = records.flatMap((record) => {
    const d = byKey.get(record.key);
    if (!d) return [];
    // a pause an earlier execution of this run made is this run's pause too
    const act = d.act ?? (pausedBy(d, ctx.job.name) ? 'pause' : undefined);
    return [{ record, act }];
  });
  const paused = targets.some((t) => t.act === 'pause' && t.record.outcome === 'succeeded');
  // parts of a split run wrote their pauses through other views of the ledger: read it afresh
  if (paused) ctx.ownership?.refresh();
  return windowActed(targets, paused ? ((await ctx.ownership?.records()) ?? new Map()) : new Map());
}

function windowOf(ctx: PlanContext): NonNullable<PlanContext['job']['window']> {
  const window = ctx.job.window;
  if (!window) throw new Error(`${ctx.job.name} is not a window`);
  return window;
}

async function decide(ctx: PlanContext, state: WindowState | undefined): Promise<WindowDecision> {
  const window = windowOf(ctx);
  const owned = (await ctx.ownership?.records()) ?? new Map();
  const decision = decideWindow({
    name: ctx.job.name,
    window,
    now: ctx.now(),
    workspaces: ctx.workspaces,
    workgroups: ctx.fleet.workgroups,
    owned,
    holds: ctx.holds,
    state,
  });
  return decision;
}

/** The workspaces a reconciliation keeps a record of: those it acts on or leaves different. */
function reported(decision: WindowDecision): WorkspaceDecision[] {
  return decision.decisions.filter((d) => d.act !== undefined || d.drift || d.conflict !== undefined);
}

/** In uptime with `resume: owned`, a Stopped workspace the window may have paused: only the ledger knows. */
function unsureResume(ctx: PlanContext, decision: WindowDecision, d: WorkspaceDecision): boolean {
  return decision.up && ctx.job.window?.resume === 'owned' && d.actual === 'Stopped' && !d.hold;
}

const WITHOUT_REDIS =
  'unknown without Redis (set REDIS_URL: the ownership ledger and window state are there)';

function plannedWithoutRedis(ctx: PlanContext, decision: WindowDecision, d: WorkspaceDecision): StepResult {
  if (d.hold || d.conflict) return plannedStep(d);
  const edge = decision.up ? 'uptime' : 'off period';
  if (d.act)
    return {
      outcome: 'planned',
      reason: `would ${d.act} it if this ${edge}'s start has not been applied yet, or left it to do; ${WITHOUT_REDIS}`,
    };
  if (unsureResume(ctx, decision, d))
    return { outcome: 'planned', reason: `would resume it if ${ctx.job.name} paused it; ${WITHOUT_REDIS}` };
  return plannedStep(d);
}

function plannedStep(d: WorkspaceDecision): StepResult {
  if (d.act) return { outcome: 'planned', reason: `would ${d.act}: ${d.why}` };
  return { outcome: 'skipped', reason: driftReason(d) };
}

function driftReason(d: WorkspaceDecision): string {
  if (d.conflict !== undefined) return `drift: ${d.why}`;
  return d.drift ? `drift: wanted ${d.desired}, is ${d.actual ?? 'unknown'}: ${d.why}` : d.why;
}

/**
 * Workspaces under this window and another one, which neither acts on: a policy problem no glob
 * could show (a target naming a workgroup by id, another by its name), so each plan and
 * reconciliation reports it until the policy says which window a workspace is under.
 */
function reportConflicts(ctx: PlanContext, decision: WindowDecision): void {
  for (const d of decision.decisions) {
    if (d.conflict === undefined) continue;
    const subject = `${d.ws.workgroupName}/${d.ws.workspaceName}`;
    ctx.finding({
      rule: 'window-conflict',
      severity: 'warning',
      subject,
      message: `${subject} is under windows "${ctx.job.name}" and "${d.conflict}": neither acts on it until the policy puts it under one (do their targets name its workgroup once by id, once by name?)`,
    });
  }
}

async function act(ctx: ActionContext, d: WorkspaceDecision, step: StepContext): Promise<StepResult> {
  if (d.act === 'pause') {
    const result = await pauseStep(ctx, d.ws, step);
    return result.outcome === 'succeeded' ? { ...result, reason: result.reason ?? d.why } : result;
  }
  if (d.act === 'resume') {
    const { result } = await resumeStep(ctx, d.ws, step);
    return result.outcome === 'succeeded' ? { ...result, reason: d.why } : result;
  }
  if (!d.drift && !d.conflict) {
    const earlier = await earlierPause(ctx, d.key, d.owner, { status: d.actual, stamp: ctx.fleet.first });
    if (earlier) return earlier;
  }
  return { outcome: 'skipped', reason: driftReason(d) };
}

/** Paused, by this window's own record. */
function pausedBy(d: WorkspaceDecision, window: string): boolean {
  return d.owner?.owner === window && d.actual !== undefined && PAUSED.includes(d.actual);
}

/**
 * Workspaces an earlier execution of this run paused and left as wanted (its worker stopped before
 * their checkpoints): reported by this run, so its summary holds every pause the run made.
 */
function byEarlierExecution(decision: WindowDecision, ctx: PlanContext): WorkspaceDecision[] {
  return decision.decisions.filter(
    (d) =>
      d.act === undefined &&
      !d.drift &&
      d.conflict === undefined &&
      pausedBy(d, ctx.job.name) &&
      d.owner?.runId === ctx.runId,
  );
}

/**
 * Paused workspaces of the window that nobody owns, yet the pause journal says nightshift paused:
 * nothing would hand them back. Each is a finding (rule `stranded`) until adopted or started.
 */
async function strandedOf(ctx: ActionContext, decision: WindowDecision): Promise<Finding[]> {
  const unowned = decision.decisions.filter(
    (d) => !d.owner && d.conflict === undefined && d.actual !== undefined && PAUSED.includes(d.actual),
  );
  if (!ctx.ownership || unowned.length === 0) return [];
  const journal = await ctx.ownership.journal(unowned.map((d) => d.key));
  return [...journal.values()].map(strandedFinding);
}

/** The workspaces a reconciliation leaves different from what the window wants, held ones aside. */
function drifting(decision: WindowDecision, done: ReadonlySet<string> | undefined): string[] {
  return decision.decisions
    .filter((d) => d.drift && !d.hold && !(done?.has(d.key) && d.act))
    .map((d) => d.key);
}

/** What a reconciliation found, for its summary and the window's state (the drift gauge reads it). */
function evidence(decision: WindowDecision, done: ReadonlySet<string> | undefined) {
  return {
    up: decision.up,
    period: decision.period,
    workspaces: decision.decisions.length,
    drift: drifting(decision, done).length,
    held: decision.decisions.filter((d) => d.hold).length,
    acted: done?.size ?? 0,
  };
}
