import type { ApiClient } from '../api/index.js';
import type { Logger } from '../log/index.js';
import { formatProblem, jobProblem, type PolicyJob, type Pricing } from '../policy/index.js';
import {
  type Action,
  type ActionContext,
  type ActionIo,
  type PlanContext,
  type RunVerdict,
  readOnlyApi,
  workspaceRef,
} from './action.js';
import { callScope } from './call-scope.js';
import type { CheckpointStore } from './checkpoint.js';
import { type Clock, systemClock } from './clock.js';
import { firstListing } from './first-listing.js';
import { FleetView } from './fleet.js';
import { type FleetListingSink, leaveListing, notingWrites, trimListing } from './fleet-listing.js';
import type { HoldReader } from './holds.js';
import { type ExecutionLease, leasedApi } from './lease.js';
import { type OwnershipLedger, RunOwnership, readOnlyLedger } from './ownership.js';
import { checkpointsWithoutSecrets, secretsHiddenFor } from './redact.js';
import { AttemptsFailedError, waitForState } from './retry.js';
import type { RunPart, RunSplitter } from './run-parts.js';
import { executeSplitRun } from './split-run.js';
import {
  countTargets,
  type ErrorRecord,
  errorRecord,
  type Finding,
  type RunIdentity,
  type RunSummary,
  type RunTrigger,
  runOutcome,
  summarize,
  type TargetRecord,
} from './summary.js';
import { runTargets } from './target-runner.js';
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
   * Set when this is one part of a split run: it reads the fleet the run listed (`split.listing`;
   * on a later delivery it lists it afresh) and works only the part's targets, under the run's
   * id. Its summary is not the run's.
   */
  part?: RunPart;
}

/** What nightshift keeps in Redis about workspaces across runs. */
export interface FleetStateStores {
  ledger: OwnershipLedger;
  holds: HoldReader;
  windows: WindowStateStore;
}

/**
 * A dry run's context: the reading halves of the client and the I/O ports alone, so a plan cannot
 * write at run time either, not only at compile time.
 */
function planContext(ctx: ActionContext): PlanContext {
  const { files, secretSinks } = ctx;
  return {
    ...ctx,
    api: readOnlyApi(ctx.api),
    files: { exists: (path) => files.exists(path) },
    secretSinks: { checkFile: (path) => secretSinks.checkFile(path) },
  };
}

export interface RunDependencies {
  api: ApiClient;
  /** The files and programs actions reach (`ActionContext.files`, `.secretSinks`). */
  io: ActionIo;
  actions: ReadonlyMap<string, Action>;
  checkpoints: CheckpointStore;
  log: Logger;
  /** Aborts the run from outside (shutdown past its grace period, the run's lock lost). */
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
   * Shares a run of a `splittable` action over more than `split.partSize` targets between
   * workers, and gives parts the run's listing. Default: none (every run is worked whole).
   */
  split?: RunSplitter;
  /**
   * Where the run reads the time and waits: deadlines, backoff, how long a wait lasted, the run's
   * timestamps. Tests pass one that moves on without waiting. Default: the system's.
   */
  clock?: Clock;
  /**
   * The time of day decisions read (`ActionContext.now`: windows, holds); a worker whose ticks run
   * on a shifted clock passes it. Default: the clock's.
   */
  now?: () => Date;
}

/** A run that could not act: its summary says why; no target was touched. */
function refused(
  request: RunRequest,
  startedAt: Date,
  finishedAt: Date,
  reason: string,
  requestIds: string[],
  error?: ErrorRecord,
): RunSummary {
  return summarize(identity(request), {
    startedAt,
    finishedAt,
    outcome: 'failed',
    reason,
    error,
    requestIds,
  });
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

/**
 * Runs one job once: lists the fleet, resolves the job's target, refuses a run past
 * `maxTargets`, then has the action plan (dry run) or act on every target, and returns the
 * run's summary. A target's failure is part of the summary, never an exception; the function
 * throws only when `deps.signal` aborts (the run is then picked up again and resumes from its
 * checkpoints).
 */
export async function executeRun(given: RunDependencies, request: RunRequest): Promise<RunSummary> {
  // every API call of the run, the fleet's listings and polls included, asks the lease first
  const deps = given.lease ? { ...given, api: leasedApi(given.api, given.lease), lease: undefined } : given;
  const { job } = request;
  const clock = deps.clock ?? systemClock;
  const startedAt = request.startedAt ?? clock.now();
  // what the run shows and stores has the policy's secrets as ${NAME}; only the action sees them
  const hide = secretsHiddenFor(job);
  const log = deps.log.child(
    { runId: request.runId, job: job.name, action: job.action },
    { formatters: { log: hide } },
  );
  const runRequestIds: string[] = [];
  const refuse = (reason: string, error?: ErrorRecord) =>
    refused(request, startedAt, clock.now(), reason, runRequestIds, error);
  let listed: FleetView | undefined;
  // `listed.requested` when the run's last write was answered; a split run's writes are its parts'
  let wroteAt = 0;
  let split = false;
  const finished = await callScope.run({ log, requestIds: runRequestIds }, async () => {
    const action = deps.actions.get(job.action);
    if (!action) return refuse(`unknown action "${job.action}"`);

    const timeout = AbortSignal.timeout(job.timeout);
    const signal = AbortSignal.any([deps.signal, timeout]);
    log.info(
      {
        trigger: request.trigger,
        dryRun: request.dryRun,
        params: hide(job.params),
        part: request.part?.index,
      },
      'run started',
    );
    if (request.takenOverFrom)
      log.warn(
        { takenOverFrom: request.takenOverFrom, deliveries: request.deliveries, startedAt },
        'run taken over from a worker that stopped mid-run: finished targets are kept, the rest resume',
      );

    const ledger = deps.state?.ledger;
    const first = await firstListing(
      { ...deps, signal, interrupted: deps.signal, log, clock, ledger },
      request,
    );
    if ('refused' in first) return refuse(first.refused, first.error);
    const { workgroups, at: listedAt, seq: listedSeq } = first;
    const fleet = new FleetView({
      api: deps.api,
      log,
      workgroups,
      listedAt,
      listedSeq,
      sequence: ledger ? () => ledger.sequence() : undefined,
      pollIntervalMs: deps.pollIntervalMs,
      retry: job.retry,
      clock,
      signal,
    });
    if (!request.part) listed = fleet;

    const selection = resolveTargets(action, job, workgroups);
    if (!selection.allowed) {
      const reason = `refused: ${formatProblem(jobProblem(job, `${selection.count} targets exceed maxTargets (${selection.limit})`))}`;
      log.error({ selected: selection.count, limit: selection.limit }, 'run refused by maxTargets');
      return refuse(reason);
    }
    // the job's timeout bounds each part (each runs as a run): the wait for them is not cut by it
    const splitter = !request.part && action.splittable ? deps.split : undefined;
    split = splitter !== undefined && selection.workspaces.length > splitter.partSize;
    if (split && splitter)
      return executeSplitRun(
        {
          split: splitter,
          checkpoints: deps.checkpoints,
          clock,
          log,
          signal: deps.signal,
          onProgress: deps.onProgress,
          workPart: (part, deliveries) => workPart(deps, { ...request, part, deliveries }),
        },
        {
          run: identity(request),
          startedAt,
          listing: {
            at: listedAt.toISOString(),
            ...(listedSeq === undefined ? {} : { seq: listedSeq }),
            runId: request.runId,
            job: job.name,
            workgroups: trimListing(workgroups),
          },
          targets: selection.workspaces.map(workspaceRef),
          requestIds: runRequestIds,
        },
      );
    const workspaces = request.part ? partOf(selection.workspaces, request.part) : selection.workspaces;

    const done = await deps.checkpoints.load(request.runId, request.part?.keys);
    const records = new Map<string, TargetRecord>();
    const findings: Finding[] = [];
    let evidence: Record<string, unknown> | undefined;
    const verdicts: { outcome: RunVerdict; reason: string }[] = [];
    const total = workspaces.length + selection.workgroups.length;
    const now = deps.now ?? (() => clock.now());
    let holds: Awaited<ReturnType<HoldReader['active']>> | undefined;
    // holds are about workspaces: a run over workgroups or named resources does not read them
    if (deps.state && action.scope === 'workspace') {
      try {
        holds = await deps.state.holds.active(now(), { readOnly: request.dryRun });
      } catch (error) {
        if (deps.signal.aborted) throw deps.signal.reason;
        log.error({ err: errorRecord(error) }, 'run could not read the holds');
        return refuse('could not read the holds in Redis', errorRecord(error));
      }
    }
    const ownership = deps.state
      ? new RunOwnership({
          ledger: request.dryRun ? readOnlyLedger(deps.state.ledger) : deps.state.ledger,
          owner: job.name,
          ownerKind: job.kind,
          runId: request.runId,
          pricing: request.pricing,
          exclusive: deps.exclusive,
          log,
          // the ledger's times are compared with the fleet's listing time: both on the run's clock
          now: () => clock.now(),
        })
      : undefined;
    const ctx: ActionContext = {
      api: notingWrites(deps.api, () => {
        wroteAt = fleet.requested;
      }),
      files: deps.io.files,
      secretSinks: deps.io.secretSinks,
      log,
      signal,
      dryRun: request.dryRun,
      runId: request.runId,
      job: { name: job.name, concurrency: job.concurrency, window: job.window },
      fleet,
      workspaces,
      workgroups: selection.workgroups,
      ownership,
      holds,
      windowStates: deps.state?.windows,
      now,
      waitForState: (wait) => waitForState({ ...wait, policy: job.retry, clock }),
      forEachTarget: (items, ref, step) =>
        runTargets(
          {
            runId: request.runId,
            concurrency: job.concurrency,
            retry: job.retry,
            clock,
            checkpoints: checkpointsWithoutSecrets(deps.checkpoints, hide),
            done,
            log,
            signal,
            onRecord: (record) => {
              records.set(record.key, record);
              deps.onProgress?.(records.size, Math.max(total, records.size));
            },
          },
          items,
          ref,
          step,
        ),
      finding: (finding) => (callScope.getStore()?.findings ?? findings).push(finding),
      findings: () => [...findings, ...[...records.values()].flatMap((record) => record.findings ?? [])],
      evidence: (record) => {
        evidence = { ...evidence, ...record };
      },
      markRun: (outcome, reason) => {
        verdicts.push({ outcome, reason });
      },
    };

    let runError: ErrorRecord | undefined;
    try {
      await (request.dryRun ? action.plan(planContext(ctx), job.params) : action.run(ctx, job.params));
    } catch (error) {
      if (deps.signal.aborted) throw deps.signal.reason;
      runError = timeout.aborted
        ? { message: `the run timed out after ${job.timeout} ms` }
        : errorRecord(error instanceof AttemptsFailedError ? error.cause : error);
      log.error({ err: runError }, 'run stopped early');
    }

    // a target an earlier execution finished stays in the run's summary, whether or not this one
    // came to it again (a window's reconciliation leaves out what it finds already as wanted)
    for (const [key, record] of done) if (!records.has(key)) records.set(key, record);
    const counts = countTargets([...records.values()]);
    const finishedAt = clock.now();
    const fromTargets = runError
      ? counts.succeeded + counts.skipped > 0
        ? 'partial'
        : 'failed'
      : runOutcome(counts);
    const reasons = [runError?.message, ...verdicts.map((verdict) => verdict.reason)].filter(
      (reason): reason is string => reason !== undefined,
    );
    const summary = summarize(identity(request), {
      startedAt,
      finishedAt,
      outcome: worstOutcome(fromTargets, verdicts),
      reason: reasons.length > 0 ? reasons.join('; ') : undefined,
      error: runError,
      targets: records.values(),
      findings,
      evidence,
      requestIds: runRequestIds,
    });
    log.info(
      { outcome: summary.outcome, counts: summary.counts, durationMs: summary.durationMs },
      'run finished',
    );
    return summary;
  });
  if (listed && deps.listings) {
    const changed = split
      ? !request.dryRun && finished.counts.succeeded > 0
      : wroteAt >= listed.stamp.generation;
    await leaveListing(deps.listings, listed, { runId: request.runId, job: job.name, changed }, log);
  }
  return hide(finished);
}

/** The outcome from the targets, made worse by what the action marked the run (failed beats partial). */
function worstOutcome(
  fromTargets: RunSummary['outcome'],
  verdicts: readonly { outcome: RunVerdict }[],
): RunSummary['outcome'] {
  if (fromTargets === 'failed' || verdicts.some((verdict) => verdict.outcome === 'failed')) return 'failed';
  return verdicts.length > 0 ? 'partial' : fromTargets;
}

/** Works one part of a split run within the run; resolves with why it worked none of its targets, if so. */
async function workPart(
  deps: RunDependencies,
  request: RunRequest & { part: RunPart },
): Promise<string | undefined> {
  // the run reports its own progress (targets checkpointed by every part)
  const summary = await executeRun({ ...deps, onProgress: undefined }, request);
  return summary.counts.total === 0 && request.part.keys.length > 0
    ? (summary.reason ?? 'the part worked none of its targets')
    : undefined;
}

/** The workspaces of `selection` the part works, in the part's order. */
function partOf(selection: readonly SelectedWorkspace[], part: RunPart): SelectedWorkspace[] {
  const keys = new Set(part.keys);
  return selection.filter((ws) => keys.has(workspaceRef(ws).key));
}
