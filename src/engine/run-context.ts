import type { ApiClient } from '../api/index.js';
import type { Logger } from '../log/index.js';
import type { HideSecrets } from '../policy/index.js';
import type { Clock } from '../time/index.js';
import {
  type Action,
  type ActionContext,
  type ActionIo,
  type PlanContext,
  type RunVerdict,
  readOnlyApi,
  workspaceRef,
} from './action.js';
import { gatedApi } from './call-gate.js';
import type { CheckpointStore } from './checkpoint.js';
import { FailureBudget } from './failure-budget.js';
import type { FleetView } from './fleet.js';
import type { Hold, HoldReader } from './holds.js';
import { type OwnershipLedger, RunOwnership, readOnlyLedger } from './ownership.js';
import { checkpointsWithoutSecrets } from './redact.js';
import { waitForState } from './retry.js';
import type { ExecutionRequest } from './run-request.js';
import type { RunGates } from './run-slots.js';
import { type ErrorRecord, errorRecord, type Finding, type TargetRecord } from './summary.js';
import { runTargets } from './target-runner.js';
import type { SelectedWorkgroup, SelectedWorkspace } from './targets.js';
import type { WindowStateStore } from './window-state.js';

/** What a run built its action's context from. */
export interface RunContextDependencies {
  api: ApiClient;
  io: ActionIo;
  checkpoints: CheckpointStore;
  log: Logger;
  /** The run's own signal (its timeout included). */
  signal: AbortSignal;
  /** What aborts the run from outside: rethrown. */
  interrupted?: AbortSignal;
  clock: Clock;
  state?: { ledger: OwnershipLedger; holds: HoldReader; windows: WindowStateStore } | undefined;
  exclusive?: boolean | undefined;
  slots?: RunGates | undefined;
  onProgress?: ((done: number, total: number) => void) | undefined;
  /** Aborted when the run is cancelled: it starts no new target (`RunDependencies.halt`). */
  halt?: AbortSignal | undefined;
}

/** What a run's action reported, besides its targets' records. */
export interface Collected {
  records: TargetRecord[];
  findings: Finding[];
  evidence: Record<string, unknown> | undefined;
  verdicts: { outcome: RunVerdict; reason: string }[];
  /** Reasons that change no outcome (why parts of a split run failed). */
  notes: string[];
}

/** The action's context for one run, and what it collects while the action runs. */
export interface RunContext {
  ctx: ActionContext;
  /** The context a dry run gets: the reading halves of the client and the I/O ports alone. */
  planContext(): PlanContext;
  /** Takes in the records the parts of a split run left, and why parts failed. */
  adopt(records: ReadonlyMap<string, TargetRecord>, note: string | undefined): void;
  collected(): Collected;
  /** Whether the run has a failure budget (`stopAfter`, the job's or its action's): such a run is not split. */
  budgeted: boolean;
}

/**
 * Builds the action's context for a run: the holds in force (workspace actions), the run's view of
 * the ownership ledger (over its own workspaces), and the target runner with its checkpoints. A
 * target an earlier execution finished stays in the run's records, whether or not this one comes
 * to it again. Resolves with why the run cannot go on when the holds cannot be read.
 */
export async function runContext(
  deps: RunContextDependencies,
  run: {
    request: ExecutionRequest;
    action: Action;
    fleet: FleetView;
    workspaces: readonly SelectedWorkspace[];
    workgroups: readonly SelectedWorkgroup[];
    hide: HideSecrets;
  },
): Promise<RunContext | { refused: string; error: ErrorRecord }> {
  const { request, action, workspaces, hide } = run;
  const { job } = request;
  const now = () => new Date(deps.clock.now());
  let holds: Hold[] | undefined;
  // holds are about workspaces: a run over workgroups or named resources does not read them
  if (deps.state && action.scope === 'workspace') {
    try {
      holds = await deps.state.holds.active(now(), { readOnly: request.dryRun });
    } catch (error) {
      deps.interrupted?.throwIfAborted();
      deps.log.error({ err: errorRecord(error) }, 'run could not read the holds');
      return { refused: 'could not read the holds in Redis', error: errorRecord(error) };
    }
  }
  const done = await deps.checkpoints.load(request.runId, request.part?.keys);
  const records = new Map<string, TargetRecord>();
  const collected: Collected = { records: [], findings: [], evidence: undefined, verdicts: [], notes: [] };
  const total = workspaces.length + run.workgroups.length;
  // a plan fails nothing: only a real run spends its failure budget
  const stopAfter = request.dryRun ? undefined : (job.stopAfter ?? action.stopAfter);
  const budget = stopAfter && new FailureBudget(stopAfter);
  const halt = budget && deps.halt ? AbortSignal.any([deps.halt, budget.halt]) : (budget?.halt ?? deps.halt);
  const ctx: ActionContext = {
    api: gatedApi(deps.api),
    files: deps.io.files,
    secretSinks: deps.io.secretSinks,
    log: deps.log,
    signal: deps.signal,
    dryRun: request.dryRun,
    runId: request.runId,
    job: { name: job.name, concurrency: job.concurrency, window: job.window },
    fleet: run.fleet,
    workspaces,
    workgroups: run.workgroups,
    part: request.part,
    ownership: ownershipOf(deps, request, workspaces),
    holds,
    windowStates: deps.state?.windows,
    now,
    waitForState: (wait) => waitForState({ ...wait, policy: job.retry, clock: deps.clock }),
    forEachTarget: (items, ref, step, options) =>
      runTargets(
        {
          pipelined: options?.pipelined === true && budget === undefined,
          runId: request.runId,
          concurrency: job.concurrency,
          retry: job.retry,
          clock: deps.clock,
          checkpoints: checkpointsWithoutSecrets(deps.checkpoints, hide),
          done,
          log: deps.log,
          signal: deps.signal,
          halt,
          slots: deps.slots,
          slotRank: request.part?.index,
          onRecord: (record) => {
            records.set(record.key, record);
            budget?.record(record);
            deps.onProgress?.(records.size, Math.max(total, records.size));
          },
        },
        items,
        ref,
        step,
      ),
    finding: (finding) => collected.findings.push(finding),
    findings: () => [
      ...collected.findings,
      ...[...records.values()].flatMap((record) => record.findings ?? []),
    ],
    evidence: (record) => {
      collected.evidence = { ...collected.evidence, ...record };
    },
    markRun: (outcome, reason) => {
      collected.verdicts.push({ outcome, reason });
    },
  };
  return {
    ctx,
    budgeted: budget !== undefined,
    planContext: () => planContext(ctx),
    adopt(adopted, note) {
      for (const [key, record] of adopted) if (!records.has(key)) records.set(key, record);
      if (note) collected.notes.push(note);
    },
    collected() {
      // a target an earlier execution finished stays in the run's summary, whether or not this one
      // came to it again (a window's reconciliation leaves out what it finds already as wanted)
      for (const [key, record] of done) if (!records.has(key)) records.set(key, record);
      return { ...collected, records: [...records.values()] };
    },
  };
}

function ownershipOf(
  deps: RunContextDependencies,
  request: ExecutionRequest,
  workspaces: readonly SelectedWorkspace[],
): RunOwnership | undefined {
  if (!deps.state) return undefined;
  return new RunOwnership({
    ledger: request.dryRun ? readOnlyLedger(deps.state.ledger) : deps.state.ledger,
    owner: request.job.name,
    ownerKind: request.job.kind,
    runId: request.runId,
    keys: workspaces.map((ws) => workspaceRef(ws).key),
    pricing: request.pricing,
    exclusive: deps.exclusive,
    log: deps.log,
    clock: deps.clock,
  });
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
