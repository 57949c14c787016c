import type { ApiClient } from '../api/index.js';
import type { Logger } from '../log/index.js';
import type { PolicyJob, Pricing, RunParameters } from '../policy/index.js';
import type { Clock } from '../time/index.js';
import type { Action, ActionIo } from './action.js';
import type { CheckpointStore } from './checkpoint.js';
import type { FleetListing, FleetListingSink } from './fleet-listing.js';
import type { HoldReader } from './holds.js';
import type { ExecutionLease } from './lease.js';
import type { OwnershipLedger } from './ownership.js';
import type { RunPart, RunSplitter } from './run-parts.js';
import type { RunGates } from './run-slots.js';
import type { SequencedListing, SequencedListings } from './shared-listing.js';
import type { RunTrigger } from './summary.js';
import type { WindowStateStore } from './window-state.js';

export interface RunRequest {
  runId: string;
  job: PolicyJob;
  trigger: RunTrigger;
  /** The tick this run belongs to; absent for a manual run. */
  scheduledAt?: Date;
  dryRun: boolean;
  /**
   * The parameters `job` was read with (`run --with`), as typed, for the summary: `job.params`
   * holds them already. Default: none.
   */
  parameters?: RunParameters | undefined;
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
}

/** One part of a split run, worked under the run's id (`executePart`). */
export interface PartRequest extends RunRequest {
  /**
   * The part: it reads its slice of the fleet the run listed (`split.listing`; on a later delivery
   * it lists it afresh) and works only its own targets. Its summary is not the run's.
   */
  part: RunPart;
  /** A part the run works itself: its slice of the run's listing, as stored (not read back). */
  slice?: FleetListing | undefined;
}

/** What the phases read: a whole run's request, or a part's. */
export type ExecutionRequest = RunRequest & { part?: RunPart | undefined; slice?: FleetListing | undefined };

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
   * The run's slots on this worker (its calls and targets at once), shared with the run's parts it
   * holds: the job's `concurrency` in all, not per part. Default: this execution's own.
   */
  slots?: RunGates;
  /**
   * Aborted, with a `RunCancelledError`, when an operator cancels the run: it starts no new target,
   * the targets under way finish their step, and the run ends `cancelled`. Default: none.
   */
  halt?: AbortSignal | undefined;
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
