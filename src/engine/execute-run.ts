import type { ApiClient } from '../api/index.js';
import type { Logger } from '../log/index.js';
import { formatProblem, jobProblem, type PolicyJob, type Pricing } from '../policy/index.js';
import { type Clock, systemClock } from '../time/index.js';
import { type Action, type ActionIo, workspaceRef } from './action.js';
import { callScope } from './call-scope.js';
import type { CheckpointStore } from './checkpoint.js';
import { firstListing } from './first-listing.js';
import { FleetView } from './fleet.js';
import { type FleetListing, type FleetListingSink, leaveListing, trimListing } from './fleet-listing.js';
import type { HoldReader } from './holds.js';
import { type ExecutionLease, leasedApi, leasedListings } from './lease.js';
import type { OwnershipLedger } from './ownership.js';
import { secretsHiddenFor } from './redact.js';
import { AttemptsFailedError } from './retry.js';
import { type RunContext, runContext } from './run-context.js';
import { partRefusal, type RunPart, type RunSplitter } from './run-parts.js';
import type { RunSlots } from './run-slots.js';
import type { SequencedListing, SequencedListings } from './shared-listing.js';
import { runInParts } from './split-run.js';
import {
  countTargets,
  type ErrorRecord,
  errorRecord,
  type RunIdentity,
  type RunSummary,
  type RunTrigger,
  runOutcome,
  summarize,
} from './summary.js';
import { resolveTargets, type SelectedWorkspace } from './targets.js';
import type { WindowStateStore } from './window-state.js';

export interface RunRequest {
  runId: string;
  job: PolicyJob;
  trigger: RunTrigger;
  /** The tick this run belongs to; absent for a manual run. */
  scheduledAt?: Date;
  dryRun: boolean;
  /** How many times a worker has started this run, this time included. */
  deliveries?: number;
  /**
   * When the worker began the run, if before this call: the instant a run held for its tick
   * was released, its suspension and overlap checks included. Default: now.
   */
  startedAt?: Date;
  /** The worker that ran this run before it died or stopped mid-run: this run takes it over. */
  takenOverFrom?: string;
  /** The price table of the run's policy: the ledger records what a pause saves per hour. */
  pricing?: Pricing;
  /**
   * Set when this is one part of a split run: it reads its slice of the fleet the run listed
   * (`split.listing`; on a later delivery it lists it afresh) and works only the part's targets,
   * under the run's id. Its summary is not the run's.
   */
  part?: RunPart;
  /** A part the run works itself: its slice of the run's listing, as stored (not read back). */
  slice?: FleetListing | undefined;
}

/** What nightshift keeps in Redis about workspaces across runs. */
export interface FleetStateStores {
  ledger: OwnershipLedger;
  holds: HoldReader;
  windows: WindowStateStore;
}

export interface RunDependencies {
  api: ApiClient;
  /**
   * Sequenced listings shared with the other runs of the worker (shared-listing.ts). Default: the
   * run reads the ledger's sequence and lists the fleet through `api` itself.
   */
  lister?: SequencedListings;
  /** The listing asked for as the run was admitted, through `lister`: its first listing attempt's. */
  listingAhead?: Promise<SequencedListing>;
  /** The files and programs actions reach (`ActionContext.files`, `.secretSinks`). */
  io: ActionIo;
  actions: ReadonlyMap<string, Action>;
  checkpoints: CheckpointStore;
  log: Logger;
  /** Aborts the run from outside (shutdown past its grace period, the run's lease or lock lost). */
  signal: AbortSignal;
  /**
   * The execution's lease: asked before every API call, so none starts once this execution may no
   * longer act (its lease ran out unconfirmed, or the job's run lock is another run's; `signal`
   * aborts then too). Default: none (a run in the CLI's own process).
   */
  lease?: ExecutionLease;
  /**
   * The run holds its job's run lock: every other run of the job has stopped acting, so the
   * ledger's rules may decide another run's intent by a later listing. Default false.
   */
  exclusive?: boolean;
  /**
   * The targets this worker works at once for the run, shared with the run's parts it holds (the
   * job's `concurrency` in all, not per part). Default: the job's `concurrency` for this call.
   */
  slots?: RunSlots;
  /** Interval of the shared poll a run's waits use. */
  pollIntervalMs: number;
  /** Called as targets finish. */
  onProgress?: (done: number, total: number) => void;
  /** The ownership ledger, holds and windows' state (`ActionContext.ownership`…). Default: none. */
  state?: FleetStateStores;
  /**
   * Where a run that listed the fleet leaves the freshest listing it saw, at its end, whatever its
   * outcome (a dry run too: listing is a read). A save that fails is logged, never fails the run.
   * Default: none.
   */
  listings?: FleetListingSink;
  /**
   * Shares a run of an action that can `split` between workers, and gives parts the run's listing.
   * Default: none (every run is worked whole).
   */
  split?: RunSplitter;
  /**
   * Where the run reads the time and waits: deadlines, backoff, how long a wait lasted, the run's
   * timestamps and the time of day its decisions read (windows, holds). Tests pass one that moves
   * on without waiting, or reads a shifted time. Default: the system's.
   */
  clock?: Clock;
}

function identity(request: RunRequest): RunIdentity {
  return {
    runId: request.runId,
    job: request.job.name,
    action: request.job.action,
    trigger: request.trigger,
    dryRun: request.dryRun,
    scheduledAt: request.scheduledAt?.toISOString(),
    deliveries: request.deliveries,
    takenOverFrom: request.takenOverFrom,
  };
}

/** What every phase of one run shares: its clock, log, start and the request IDs made for the run itself. */
interface RunFrame {
  request: RunRequest;
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

/**
 * Runs one job once, in phases: lists the fleet, selects the job's targets (refusing a run past
 * `maxTargets`), builds the action's context, has the action plan (dry run) or act (shared out
 * in parts when the action splits and the run is large), and summarizes. A target's failure is
 * part of the summary, never an exception; the function throws only when `deps.signal` aborts (the
 * run is then picked up again and resumes from its checkpoints).
 */
export async function executeRun(given: RunDependencies, request: RunRequest): Promise<RunSummary> {
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
  const finished = await callScope.run({ log, requestIds: frame.requestIds }, () => runPhases(deps, frame));
  if (frame.listed && deps.listings)
    await leaveListing(
      deps.listings,
      frame.listed,
      { runId: request.runId, job: job.name, targets: finished.targets },
      log,
    );
  return hide(finished);
}

async function runPhases(deps: RunDependencies, frame: RunFrame): Promise<RunSummary> {
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
  if (!request.part) frame.listed = fleet;

  const selection = resolveTargets(action, job, first.workgroups);
  // the run checked maxTargets against the whole fleet; a part may hold its slice alone
  if (!selection.allowed && !request.part) {
    log.error({ selected: selection.count, limit: selection.limit }, 'run refused by maxTargets');
    const problem = jobProblem(job, `${selection.count} targets exceed maxTargets (${selection.limit})`);
    return refused(frame, `refused: ${formatProblem(problem)}`);
  }
  const workspaces = request.part ? partOf(selection.workspaces, request.part) : selection.workspaces;
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
  const runError = await act(deps, frame, action, built, timeout);
  return summarizeRun(frame, built, runError);
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

/**
 * Has the action plan (dry run) or act, sharing its work out in parts when it splits and the run
 * is large; resolves with what stopped the action early, if anything did.
 */
async function act(
  deps: RunDependencies,
  frame: RunFrame,
  action: Action,
  built: RunContext,
  timeout: AbortSignal,
): Promise<ErrorRecord | undefined> {
  const { request, log } = frame;
  const { job } = request;
  const { ctx } = built;
  try {
    if (request.dryRun) await action.plan(built.planContext(), job.params);
    else {
      // one read, for a run whose action splits: did an earlier execution of it split it?
      const earlier =
        request.part || !action.split ? undefined : await deps.split?.earlierParts(request.runId);
      const resuming = earlier && new Set(earlier.flatMap((part) => part.keys));
      const plan =
        request.part || !deps.split
          ? undefined
          : await action.split?.(ctx, job.params, deps.split.partSize, resuming);
      if (plan && deps.split) {
        // the job's timeout bounds each part (each runs as a run): the wait for them is not cut by it
        const outcome = await runInParts(
          {
            split: deps.split,
            checkpoints: deps.checkpoints,
            log,
            signal: deps.signal,
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
        await plan.finish(outcome.records);
      } else await action.run(ctx, job.params);
    }
    return undefined;
  } catch (error) {
    if (deps.signal.aborted) throw deps.signal.reason;
    const runError = timeout.aborted
      ? { message: `the run timed out after ${job.timeout} ms` }
      : errorRecord(error instanceof AttemptsFailedError ? error.cause : error);
    log.error({ err: runError }, 'run stopped early');
    return runError;
  }
}

function summarizeRun(frame: RunFrame, built: RunContext, runError: ErrorRecord | undefined): RunSummary {
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
    outcome: worstOutcome(fromTargets, collected.verdicts),
    reason: given.length > 0 ? given.join('; ') : undefined,
    error: runError,
    targets: collected.records,
    findings: collected.findings,
    evidence: collected.evidence,
    requestIds: frame.requestIds,
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
async function workPart(
  deps: RunDependencies,
  request: RunRequest & { part: RunPart },
): Promise<string | undefined> {
  // the run reports its own progress (targets checkpointed by every part); the listing it was
  // admitted with is its own
  return partRefusal(
    await executeRun({ ...deps, onProgress: undefined, listingAhead: undefined }, request),
    request.part,
  );
}

/** The workspaces of `selection` the part works, in the part's order. */
function partOf(selection: readonly SelectedWorkspace[], part: RunPart): SelectedWorkspace[] {
  const keys = new Set(part.keys);
  return selection.filter((ws) => keys.has(workspaceRef(ws).key));
}
