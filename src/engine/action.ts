import type { z } from 'zod';
import { type ApiClient, READ_OPERATIONS, type ReadOperationName } from '../api/index.js';
import { NightshiftError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { ActionScope, LongestWait, PolicyWindow, StopAfter } from '../policy/index.js';
import type { ProgressRecord } from './checkpoint.js';
import type { FleetView } from './fleet.js';
import type { Hold } from './holds.js';
import type { RunOwnership } from './ownership.js';
import type { StateWait } from './retry.js';
import type { RunPart } from './run-parts.js';
import type { Finding, TargetRecord } from './summary.js';
import type { SelectedWorkgroup, SelectedWorkspace } from './targets.js';
import type { WindowStateStore } from './window-state.js';

/** How a target is named in a run's records. `key` is stable across deliveries of the run. */
export interface TargetRef {
  key: string;
  workgroupId?: string;
  workgroupName?: string;
  workspaceId?: string;
  workspaceName?: string;
}

/** What one target's step came to. Failures are thrown (an ApiError says whether to retry). */
export type StepResult = (
  | { outcome: 'succeeded'; reason?: string; detail?: Record<string, unknown> }
  | { outcome: 'skipped'; reason: string; detail?: Record<string, unknown> }
  | { outcome: 'planned'; reason: string; detail?: Record<string, unknown> }
) & {
  /** Request IDs of calls made for the target before this step (an earlier execution's, from the ledger). */
  earlierRequestIds?: readonly string[];
  /**
   * What the step found (an audit's violations): kept with the target's record and its
   * checkpoint, so an attempt that fails reports none and a retry does not report them twice.
   */
  findings?: readonly Finding[];
  /**
   * The workspace's status as the step left it, by evidence: what the call the API accepted puts
   * it in (`Stopping` after a pause), or what a fresh look found. The fleet listing the run leaves
   * the console shows it instead of the status listed before the run acted.
   */
  status?: string;
};

export interface StepContext {
  /**
   * 1 on the first try; a step on a later try must re-read state before acting. Throttled tries
   * count here (an earlier call of the step may have gone through), not against `retry.attempts`.
   */
  attempt: number;
  signal: AbortSignal;
  log: Logger;
  /** What earlier attempts of this target did, kept with the run's checkpoint: it survives a takeover. */
  progressRecord: ProgressRecord;
}

/**
 * The API as a plan sees it: the operations the table marks as changing nothing
 * (src/api/operations.ts), so a plan that would write does not compile
 * (test/unit/jobs/action-contract.test.ts checks that each is sent as a GET).
 */
export type ReadOnlyApi = Pick<ApiClient, ReadOperationName>;

/**
 * The client's read operations alone, bound to it: what a plan is handed at run time, so one that
 * casts its way past the type still cannot write (a write operation is simply not there).
 */
export function readOnlyApi(api: ApiClient): ReadOnlyApi {
  return Object.fromEntries(READ_OPERATIONS.map((name) => [name, api[name].bind(api)])) as ReadOnlyApi;
}

/** The files an action writes on the worker (a report). */
export interface ActionFiles {
  /** Whether something is at `path` (a plan says it would replace it). */
  exists(path: string): Promise<boolean>;
  /**
   * Writes `content` to `path` whole, creating its directory: through a temporary file beside it,
   * flushed to disk and renamed over it, so a reader (or a crash) never sees half of it.
   */
  writeAtomically(path: string, content: string): Promise<void>;
}

/** A secret sink that could not take a secret. The message names the sink, never the secret. */
export class SecretSinkError extends NightshiftError {
  override name = 'SecretSinkError';
  readonly code = 'NS_SECRET_SINK_FAILED';
}

/** How a command sink is run; see {@link SecretSinkIo.runCommand}. */
export interface SinkCommand {
  /** Program and arguments, run without a shell. */
  argv: readonly string[];
  /** Written to its stdin. */
  input: string;
  /** Its own variables (the `NIGHTSHIFT_SECRET_*` ones). */
  env: Readonly<Record<string, string>>;
  /**
   * Names of the worker's variables it also gets (the sink's `env:`); besides these only `PATH` and
   * `HOME`: never the worker's credentials.
   */
  passEnv: readonly string[];
  /** Killed, and failed, when it has not exited by then. */
  timeoutMs: number;
  /** Kills it, and fails, when aborted. */
  signal: AbortSignal;
}

/**
 * Where secrets (generated passwords) leave nightshift: a private file or a command on the worker.
 * Every failure rejects with a {@link SecretSinkError} naming the file or program, never the secret.
 */
export interface SecretSinkIo {
  /**
   * Appends `line` to the file at `path`, created with mode 0600, and resolves once it (and the
   * directory entry of a file it created) is synced to disk. Refuses a symbolic link, a file that is
   * not a regular file, not this process's user's, or that group or others have any permission on
   * (checked on the open file, so one swapped in between cannot slip through), and a directory that
   * is not the user's or root's or that group or others may write to.
   */
  appendToFile(path: string, line: string): Promise<void>;
  /** Finds, writing nothing, what `appendToFile` would refuse: a shared file or directory, a missing one. */
  checkFile(path: string): Promise<void>;
  /**
   * Runs the command and resolves when it exits 0; refuses a program this machine does not allow
   * (`NIGHTSHIFT_SINK_COMMANDS`). Its stdout and stderr are discarded, never logged.
   */
  runCommand(command: SinkCommand): Promise<void>;
}

/** The ports through which actions reach the worker's files and programs; src/cli wires Node's. */
export interface ActionIo {
  files: ActionFiles;
  secretSinks: SecretSinkIo;
}

/**
 * Everything an action touches the world through. The engine owns concurrency, per-target
 * retries, checkpoints and request-ID bookkeeping; the action owns what a step does. `run` gets
 * all of it; `plan` gets a `PlanContext`, which only reads.
 */
export interface ActionContext extends ActionIo {
  api: ApiClient;
  log: Logger;
  signal: AbortSignal;
  dryRun: boolean;
  /** The run's id, as in its summary and log lines (e.g. to label a secret delivered to a sink). */
  runId: string;
  /** The job's name and concurrency; for a window's reconciliation, the window too. */
  job: { name: string; concurrency: number; window?: PolicyWindow | undefined };
  /** The fleet, listed when the run started; shared polls keep it fresh while steps wait. */
  fleet: FleetView;
  /** The job's target, resolved when the run started (scope `workspace`); a part's own only. */
  workspaces: readonly SelectedWorkspace[];
  /**
   * Set when this run is one part of a split run (`Action.split`): it acts on its workspaces only,
   * and leaves what the whole run decides and records to the run.
   */
  part?: RunPart | undefined;
  /** The job's target, resolved when the run started (scope `workgroup`). */
  workgroups: readonly SelectedWorkgroup[];
  /**
   * The ownership ledger, bound to this run (its job or window is the owner): given by workers, and
   * by `run --inline` and `plan` when REDIS_URL is set; absent otherwise. Read-only in a dry run.
   */
  ownership?: RunOwnership;
  /** The holds in force when the run started (workspace actions only); absent when unknown (no Redis). */
  holds?: readonly Hold[];
  /** Windows' reconciliation state; absent without Redis. */
  windowStates?: WindowStateStore;
  /** The run's clock: what "now" is for decisions that depend on the time (windows, holds, durations). */
  now(): Date;
  /**
   * Waits for a state of one thing other than a workspace (a workspace's: `fleet.waitFor`), with
   * the engine's rule for failed looks (retry.ts) under the job's retry policy and the run's clock.
   */
  waitForState<T>(wait: Omit<StateWait<T>, 'policy' | 'clock'>): Promise<T>;
  /**
   * Runs `step` for each item with the job's concurrency, retrying each on its own. Resolves with
   * the items' records, those an earlier execution of the run finished (and this one did not run
   * again) included. `pipelined`: each step is a few API calls with Redis writes around them and
   * never waits for the platform (a pause, a resume that is not waited for): the run then works
   * more targets at once than it has calls in flight (`TargetRunnerOptions.pipelined`), unless it
   * has a failure budget, which must stop it with few targets under way.
   */
  forEachTarget<T>(
    items: readonly T[],
    ref: (item: T) => TargetRef,
    step: (item: T, context: StepContext) => Promise<StepResult>,
    options?: { pipelined?: boolean },
  ): Promise<TargetRecord[]>;
  /**
   * Reports a finding of the run as a whole (a conflict between windows, a drill's verdict). A
   * target's step returns its own findings in its result instead (`StepResult.findings`).
   */
  finding(finding: Finding): void;
  /**
   * Every finding of the run so far: the run's own and those of every finished target, including
   * targets finished by an earlier delivery of the run (kept with their checkpoints), so a verdict
   * on findings (an audit's `failOn`) sees all of them after a takeover.
   */
  findings(): readonly Finding[];
  evidence(record: Record<string, unknown>): void;
  /**
   * Makes the run end at least `outcome` (partial, or failed) with `reason`, whatever its targets
   * came to: e.g. a resume that leaves workspaces it owns stopped, or an audit whose findings
   * reach its `failOn` severity. The worst outcome wins; every reason is kept.
   */
  markRun(outcome: RunVerdict, reason: string): void;
}

/** A run's work shared out in parts (see `Action.split`). */
export interface SplitPlan {
  /** What the parts act on: cut into parts of the part size, each worked by any worker. */
  readonly targets: readonly SelectedWorkspace[];
  /**
   * What the run does once every part has ended, in the run's context, given the records of every
   * target the parts had: its own targets' records (`forEachTarget`), evidence, verdicts.
   */
  finish(records: ReadonlyMap<string, TargetRecord>): Promise<void>;
}

/** What an action may make of a whole run beyond its targets' outcomes. */
export type RunVerdict = 'partial' | 'failed';

/** What a plan works with: the run's context, with only the reading half of the client and the ports. */
export interface PlanContext extends Omit<ActionContext, 'api' | 'files' | 'secretSinks'> {
  api: ReadOnlyApi;
  files: Pick<ActionFiles, 'exists'>;
  secretSinks: Pick<SecretSinkIo, 'checkFile'>;
}

/**
 * What an action is: the one declaration. Each module under `jobs/` declares one beside its code
 * and `jobs/index.ts` registers them. The policy layer sees an action through its narrower
 * `ActionCatalogEntry` (name, scope, params schema…), which this satisfies.
 */
export interface Action<Params extends z.ZodType = z.ZodType> {
  /** The name jobs use in `action:`; kebab-case. */
  readonly name: string;
  /** One line for listings and the JSON Schema. */
  readonly description: string;
  /** A destructive action deletes or overwrites data; a job using it must set `confirm: true`. */
  readonly destructive: boolean;
  readonly scope: ActionScope;
  /**
   * When a run stops starting targets because too many failed, unless its job says (`stopAfter`):
   * rollouts and deletions stop after the first failure, so one bad change is not rolled on.
   * Default: never (every target is tried).
   */
  readonly stopAfter?: StopAfter;
  /**
   * How a run of this `workspace` action shares its work between workers, for an action whose
   * targets are independent of each other. Called in the run once it has listed the fleet, with
   * the engine's part size: resolves with the workspaces the parts act on and what the run does
   * once every part has ended, or undefined when this run is not worth splitting (then `run` does
   * it all). Each part runs `run` over its own workspaces, `ctx.part` set. Default: never split.
   * `resuming` holds the targets an earlier execution of the run shared out, when one did (it was
   * taken over since): those parts may still be working, so the plan's targets must be these,
   * however many, and none the run works itself.
   */
  split?(
    ctx: ActionContext,
    params: z.output<Params>,
    partSize: number,
    resuming: ReadonlySet<string> | undefined,
  ): Promise<SplitPlan | undefined>;
  /**
   * A `workgroup` or `workspace` action that can also act on what its `with:` names (e.g. cloud
   * provider ids) may leave `target` out; without this, a target is required.
   */
  readonly targetOptional?: boolean;
  /**
   * The action lists the organization's users: the one operation authenticated by the bearer
   * token (`NIGHTSHIFT_BEARER_TOKEN`) rather than the API key, so a process that will run it
   * must have the token.
   */
  readonly needsBearerToken?: boolean;
  /**
   * Parameters whose value names another job of the same policy, with the action that job must
   * use: resume's `onlyPausedBy` names a `pause` job. Validation refuses a name that is no job of
   * the policy, or a job using another action, at the parameter's value. Default: none.
   */
  readonly jobReferences?: Readonly<Record<string, { readonly action: string }>>;
  /** The schema of the job's `with:`; strict, so a misspelt parameter is an error. */
  readonly params: Params;
  /**
   * The longest the action's waits may keep one run going with these parameters, and why in
   * words: `validate` warns when the job's `timeout` is not longer. Default: it does not wait.
   */
  longestWait?(params: z.output<Params>): LongestWait | undefined;
  /** A complete policy file using the action; a test checks that it validates. */
  readonly example: string;
  /** What `run` would do now; its client only reads. */
  plan(ctx: PlanContext, params: z.output<Params>): Promise<void>;
  run(ctx: ActionContext, params: z.output<Params>): Promise<void>;
}

/** How a read-only action ends a target: `planned` in a dry run, `succeeded` in a real one. */
export type ReadOnlyDone = (detail: Record<string, unknown>) => StepResult;

/**
 * `plan` and `run` of an action that only reads: a dry run makes the same calls and reports the
 * same findings, so both are `read`; only the targets' outcome (`planned`, saying `plannedAs`)
 * tells a dry run from a real one.
 */
export function readOnlyVerbs<Params>(
  read: (ctx: PlanContext, params: Params, done: ReadOnlyDone) => Promise<unknown>,
  plannedAs: string,
): {
  plan(ctx: PlanContext, params: Params): Promise<void>;
  run(ctx: ActionContext, params: Params): Promise<void>;
} {
  return {
    plan: async (ctx, params) => {
      await read(ctx, params, (detail) => ({ outcome: 'planned', reason: plannedAs, detail }));
    },
    run: async (ctx, params) => {
      await read(ctx, params, (detail) => ({ outcome: 'succeeded', detail }));
    },
  };
}

/**
 * What a split shares out: `chosen`, or, when resuming a run an earlier execution had split, the
 * workspaces of its parts (`Action.split`'s `resuming`) whatever the run would choose now.
 */
export function sharedOut(
  workspaces: readonly SelectedWorkspace[],
  chosen: readonly SelectedWorkspace[],
  resuming: ReadonlySet<string> | undefined,
): readonly SelectedWorkspace[] {
  return resuming ? workspaces.filter((ws) => resuming.has(workspaceRef(ws).key)) : chosen;
}

export function workspaceRef(ws: SelectedWorkspace): TargetRef {
  return {
    key: `${ws.workgroupId}/${ws.workspaceId}`,
    workgroupId: ws.workgroupId,
    workgroupName: ws.workgroupName,
    workspaceId: ws.workspaceId,
    workspaceName: ws.workspaceName,
  };
}

export function workgroupRef(wg: SelectedWorkgroup): TargetRef {
  return { key: wg.workgroupId, workgroupId: wg.workgroupId, workgroupName: wg.workgroupName };
}
