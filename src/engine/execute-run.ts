import type { Logger } from '../log/index.js';
import { formatProblem, jobProblem } from '../policy/index.js';
import { type Clock, systemClock } from '../time/index.js';
import { type Action, workspaceRef } from './action.js';
import { callScope } from './call-scope.js';
import { type Cancellation, RunCancelledError } from './cancel.js';
import { RunHaltedError } from './failure-budget.js';
import { firstListing } from './first-listing.js';
import { FleetView } from './fleet.js';
import { leaveListing, trimListing } from './fleet-listing.js';
import { leasedApi, leasedListings } from './lease.js';
import { secretsHiddenFor } from './redact.js';
import { AttemptsFailedError } from './retry.js';
import { type RunContext, runContext } from './run-context.js';
import { partRefusal, type RunPart } from './run-parts.js';
import type { ExecutionRequest, PartRequest, RunDependencies, RunRequest } from './run-request.js';
import { runInParts } from './split-run.js';
import {
  countTargets,
  type ErrorRecord,
  errorRecord,
  type RunIdentity,
  type RunSummary,
  runOutcome,
  summarize,
} from './summary.js';
import { resolveTargets, type SelectedWorkspace, type Selection as TargetSelection } from './targets.js';

function identity(request: ExecutionRequest): RunIdentity {
  return {
    runId: request.runId,
    job: request.job.name,
    action: request.job.action,
    trigger: request.trigger,
    dryRun: request.dryRun,
    parameters: request.parameters,
    scheduledAt: request.scheduledAt?.toISOString(),
    deliveries: request.deliveries,
    takenOverFrom: request.takenOverFrom,
  };
}

/** What every phase of one run shares: its clock, log, start and the request IDs made for the run itself. */
interface RunFrame {
  request: ExecutionRequest;
  clock: Clock;
  log: Logger;
  startedAt: Date;
  requestIds: string[];
  /** The listing the run keeps for readers (not a part's). */
  listed?: FleetView;
}

/** A run that could not act: its summary says why; no target was touched. */
function refused(frame: RunFrame, reason: string, error?: ErrorRecord): RunSummary {
  return summarize(identity(frame.request), {
    startedAt: frame.startedAt,
    finishedAt: new Date(frame.clock.now()),
    outcome: 'failed',
    reason,
    error,
    requestIds: frame.requestIds,
  });
}

/** How a whole run and one part of a split run differ: which targets they work, and how they act. */
interface RunScope {
  /** The workspaces of the job's selection it works, or why it may not act at all. */
  workspaces(selection: TargetSelection, frame: RunFrame): readonly SelectedWorkspace[] | { refused: string };
  /** Has the action plan or act on the context the phases built. */
  act(deps: RunDependencies, frame: RunFrame, action: Action, built: RunContext): Promise<void>;
  /** Whether the run leaves its listing for readers (a part's slice is its run's). */
  keepsListing: boolean;
}

/** A run as a job's tick (or a person) asked for it: every target, shared out in parts when large. */
const WHOLE_RUN: RunScope = {
  workspaces(selection, { request, log }) {
    if (selection.allowed) return selection.workspaces;
    log.error({ selected: selection.count, limit: selection.limit }, 'run refused by maxTargets');
    const problem = jobProblem(
      request.job,
      `${selection.count} targets exceed maxTargets (${selection.limit})`,
    );
    return { refused: `refused: ${formatProblem(problem)}` };
  },
  act: planOrAct,
  keepsListing: true,
};

/** One part of a split run: its own targets only (the run checked `maxTargets` against the whole fleet). */
function partScope(part: RunPart): RunScope {
  const keys = new Set(part.keys);
  return {
    workspaces: (selection) => selection.workspaces.filter((ws) => keys.has(workspaceRef(ws).key)),
    // a dry run is never split; were a part ever one, it would still only plan
    act: (_deps, { request }, action, built) =>
      request.dryRun
        ? action.plan(built.planContext(), request.job.params)
        : action.run(built.ctx, request.job.params),
    keepsListing: false,
  };
}

/**
 * Runs one job once, in phases: lists the fleet, selects the job's targets (refusing a run past
 * `maxTargets`), builds the action's context, has the action plan (dry run) or act (shared out
 * in parts when the action splits and the run is large), and summarizes. A target's failure is
 * part of the summary, never an exception; the function throws only when `deps.signal` aborts (the
 * run is then picked up again and resumes from its checkpoints).
 */
export function executeRun(deps: RunDependencies, request: RunRequest): Promise<RunSummary> {
  return execute(deps, request, WHOLE_RUN);
}

/**
 * Works one part of a split run, under the run's id, through the same phases: its slice of the
 * run's listing (listed afresh on a later delivery), its own targets, its own checkpoints. Its
 * summary is the part's, not the run's (the run's is built from every part's checkpoints).
 */
export function executePart(deps: RunDependencies, request: PartRequest): Promise<RunSummary> {
  return execute(deps, request, partScope(request.part));
}

async function execute(
  given: RunDependencies,
  request: ExecutionRequest,
  scope: RunScope,
): Promise<RunSummary> {
  // every API call of the run, the fleet's listings and polls included, asks the lease first
  const deps = given.lease
    ? {
        ...given,
        api: leasedApi(given.api, given.lease),
        lister: given.lister && leasedListings(given.lister, given.lease),
        lease: undefined,
      }
    : given;
  const { job } = request;
  const clock = deps.clock ?? systemClock;
  // what the run shows and stores has the policy's secrets as ${NAME}; only the action sees them
  const hide = secretsHiddenFor(job);
  // a part's lines say which part: its run's other parts share its run id
  const bindings = { runId: request.runId, job: job.name, action: job.action, part: request.part?.index };
  const log = deps.log.child(bindings, { formatters: { log: hide } });
  const frame: RunFrame = {
    request,
    clock,
    log,
    startedAt: request.startedAt ?? new Date(clock.now()),
    requestIds: [],
  };
  const finished = await callScope.run({ log, requestIds: frame.requestIds }, () =>
    runPhases(deps, frame, scope),
  );
  if (frame.listed && deps.listings)
    await leaveListing(
      deps.listings,
      frame.listed,
      { runId: request.runId, job: job.name, targets: finished.targets },
      log,
    );
  return hide(finished);
}

async function runPhases(deps: RunDependencies, frame: RunFrame, scope: RunScope): Promise<RunSummary> {
  const { request, clock, log } = frame;
  const { job } = request;
  const action = deps.actions.get(job.action);
  if (!action) return refused(frame, `unknown action "${job.action}"`);
  const timeout = AbortSignal.timeout(job.timeout);
  const signal = AbortSignal.any([deps.signal, timeout]);
  logStart(frame);

  const ledger = deps.state?.ledger;
  const first = await firstListing(
    { ...deps, ahead: deps.listingAhead, signal, interrupted: deps.signal, log, clock, ledger },
    request,
  );
  if ('refused' in first) return refused(frame, first.refused, first.error);
  const fleet = new FleetView({
    api: deps.api,
    log,
    workgroups: first.workgroups,
    listedAt: first.at,
    listedSeq: first.seq,
    sequence: ledger ? () => ledger.sequence() : undefined,
    pollIntervalMs: deps.pollIntervalMs,
    retry: job.retry,
    clock,
    signal,
  });
  if (scope.keepsListing) frame.listed = fleet;

  const selection = resolveTargets(action, job, first.workgroups);
  const workspaces = scope.workspaces(selection, frame);
  if ('refused' in workspaces) return refused(frame, workspaces.refused);
  const built = await runContext(
    { ...deps, signal, interrupted: deps.signal, clock, log },
    {
      request,
      action,
      fleet,
      workspaces,
      workgroups: selection.workgroups,
      hide: secretsHiddenFor(job),
    },
  );
  if ('refused' in built) return refused(frame, built.refused, built.error);
  const stopped = await acting(scope.act(deps, frame, action, built), frame, deps.signal, timeout);
  return summarizeRun(frame, built, stopped);
}

function logStart({ request, log, startedAt }: RunFrame): void {
  const { job } = request;
  log.info(
    {
      trigger: request.trigger,
      dryRun: request.dryRun,
      params: secretsHiddenFor(job)(job.params),
    },
    'run started',
  );
  if (request.takenOverFrom)
    log.warn(
      { takenOverFrom: request.takenOverFrom, deliveries: request.deliveries, startedAt },
      'run taken over from a worker that stopped mid-run: finished targets are kept, the rest resume',
    );
}

/** What stopped the action early, if anything did: an error, an operator's cancel, or a spent failure budget. */
interface Stopped {
  error?: ErrorRecord;
  cancellation?: Cancellation;
  halted?: boolean;
}

/** What stopped the action early, if anything did; rethrows what aborts the run from outside. */
async function acting(
  work: Promise<void>,
  { request, log }: RunFrame,
  interrupted: AbortSignal,
  timeout: AbortSignal,
): Promise<Stopped> {
  try {
    await work;
    return {};
  } catch (error) {
    if (interrupted.aborted) throw interrupted.reason;
    if (error instanceof RunCancelledError) {
      log.warn({ by: error.cancellation.by, reason: error.cancellation.reason }, 'run cancelled');
      return { error: errorRecord(error), cancellation: error.cancellation };
    }
    if (error instanceof RunHaltedError) {
      log.warn({ reason: error.message }, 'run halted: its failure budget is spent');
      return { error: errorRecord(error), halted: true };
    }
    const runError = timeout.aborted
      ? { message: `the run timed out after ${request.job.timeout} ms` }
      : errorRecord(error instanceof AttemptsFailedError ? error.cause : error);
    log.error({ err: runError }, 'run stopped early');
    return { error: runError };
  }
}

/** Has the action plan (dry run) or act, sharing its work out in parts when it splits and the run is large. */
async function planOrAct(
  deps: RunDependencies,
  frame: RunFrame,
  action: Action,
  built: RunContext,
): Promise<void> {
  const { request, log } = frame;
  const { job } = request;
  const { ctx } = built;
  if (request.dryRun) return action.plan(built.planContext(), job.params);
  // one read, for a run whose action splits: did an earlier execution of it split it?
  const earlier = action.split ? await deps.split?.earlierParts(request.runId) : undefined;
  const resuming = earlier && new Set(earlier.flatMap((part) => part.keys));
  // a run with a failure budget counts its failures in one place: it is not split
  const plan =
    deps.split && !built.budgeted
      ? await action.split?.(ctx, job.params, deps.split.partSize, resuming)
      : undefined;
  if (!plan || !deps.split) return action.run(ctx, job.params);
  // the job's timeout bounds each part (each runs as a run): the wait for them is not cut by it
  const outcome = await runInParts(
    {
      split: deps.split,
      checkpoints: deps.checkpoints,
      log,
      signal: deps.signal,
      halt: deps.halt,
      onProgress: deps.onProgress,
      workPart: (part, deliveries, slice) => workPart(deps, { ...request, part, deliveries, slice }),
    },
    {
      runId: request.runId,
      listing: {
        at: ctx.fleet.listedAt.toISOString(),
        ...(ctx.fleet.first.seq === undefined ? {} : { seq: ctx.fleet.first.seq }),
        runId: request.runId,
        job: job.name,
        workgroups: trimListing(ctx.fleet.workgroups),
      },
      targets: plan.targets.map(workspaceRef),
      parts: earlier,
    },
  );
  built.adopt(outcome.records, outcome.reason);
  // cancelled with targets left: the run ends here, as a run whose targets stopped starting does
  if (outcome.unstarted > 0) deps.halt?.throwIfAborted();
  await plan.finish(outcome.records);
}

function summarizeRun(
  frame: RunFrame,
  built: RunContext,
  { error: runError, cancellation, halted }: Stopped,
): RunSummary {
  const collected = built.collected();
  const counts = countTargets(collected.records);
  const fromTargets = runError
    ? counts.succeeded + counts.skipped > 0
      ? 'partial'
      : 'failed'
    : runOutcome(counts);
  const reasons = [
    runError?.message,
    ...collected.verdicts.map((verdict) => verdict.reason),
    ...collected.notes,
  ];
  const given = reasons.filter((reason): reason is string => reason !== undefined);
  const summary = summarize(identity(frame.request), {
    startedAt: frame.startedAt,
    finishedAt: new Date(frame.clock.now()),
    // a cancelled run says so whatever its targets came to: the rest were never started
    outcome: cancellation ? 'cancelled' : halted ? 'halted' : worstOutcome(fromTargets, collected.verdicts),
    reason: given.length > 0 ? given.join('; ') : undefined,
    error: runError,
    targets: collected.records,
    findings: collected.findings,
    evidence: collected.evidence,
    requestIds: frame.requestIds,
    cancellation,
  });
  frame.log.info(
    { outcome: summary.outcome, counts: summary.counts, durationMs: summary.durationMs },
    'run finished',
  );
  return summary;
}

/** The outcome from the targets, made worse by what the action marked the run (failed beats partial). */
function worstOutcome(
  fromTargets: RunSummary['outcome'],
  verdicts: readonly { outcome: RunSummary['outcome'] }[],
): RunSummary['outcome'] {
  if (fromTargets === 'failed' || verdicts.some((verdict) => verdict.outcome === 'failed')) return 'failed';
  return verdicts.length > 0 ? 'partial' : fromTargets;
}

/** Works one part of a split run within the run; resolves with why it worked none of its targets, if so. */
async function workPart(deps: RunDependencies, request: PartRequest): Promise<string | undefined> {
  // the run reports its own progress (targets checkpointed by every part); the listing it was
  // admitted with is its own
  return partRefusal(
    await executePart({ ...deps, onProgress: undefined, listingAhead: undefined }, request),
    request.part,
  );
}
