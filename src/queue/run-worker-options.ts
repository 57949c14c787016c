import type { ApiClient } from '../api/index.js';
import type { Action, ActionIo, CheckpointStore, FleetStateStores } from '../engine/index.js';
import type { Logger } from '../log/index.js';
import type { Notifier } from '../notify/index.js';
import type { ActionCatalog, PolicyEnv } from '../policy/index.js';
import type {
  Approvals,
  FindingsLedger,
  PolicyStore,
  RedisConnection,
  RedisFleetListings,
  RunHistory,
  RunLeases,
  RunListings,
  RunLock,
  RunStarts,
} from '../store/index.js';
import type { Clock } from '../time/index.js';
import type { RunCounter } from './run-recorder.js';

/** The worker's own stores in Redis, built by src/cli (`workerStores`) with TTLs that fit its claim on a run. */
export interface RunWorkerStores {
  /**
   * What they write through (its scripts are loaded as the worker starts). A service gives a
   * connection with auto-pipelining (not BullMQ's, whose scripts it disturbs), so the admissions
   * of a burst of runs leave in a few writes instead of one each.
   */
  connection: RedisConnection;
  /** The jobs' run locks (which also record each run's first start in `starts`). */
  lock: RunLock;
  /** Each run's first start and worker, recorded as it is admitted, so a takeover keeps the one and names the other. */
  starts?: RunStarts | undefined;
  /** The execution leases: one execution of a run or part at a time calls the API. */
  leases: RunLeases;
  findings: FindingsLedger;
  /** Where every run leaves the last fleet listing it saw, for the console. */
  lastListings: RedisFleetListings;
  /** The listings split runs leave their parts. */
  runListings: RunListings;
  /** Runs waiting for a person's approval (jobs with `approval:`), and those approved. */
  approvals: Approvals;
}

/** What a worker is made of and how it behaves (src/cli wires it from the Settings). */
export interface RunWorkerOptions {
  /** Used by BullMQ (it duplicates it for its blocking connection). */
  redis: RedisConnection;
  stores: RunWorkerStores;
  prefix: string;
  api: ApiClient;
  actions: ReadonlyMap<string, Action>;
  /** The files and programs actions reach. */
  io: ActionIo;
  registry: ActionCatalog;
  /** The worker's own environment: `${VAR}`s in policies resolve here, never in Redis. */
  env: PolicyEnv;
  /** nightshift's own variables policies may read after all (`NIGHTSHIFT_POLICY_ENV_ALLOW`). Default: none. */
  allowEnv?: readonly string[];
  policies: PolicyStore;
  history: RunHistory;
  checkpoints: CheckpointStore;
  log: Logger;
  /** Runs processed at once by this worker. Default `DEFAULT_WORKER_CONCURRENCY` (50). */
  concurrency?: number;
  /** Interval of the shared poll runs use while waiting for states. Default `DEFAULT_POLL_INTERVAL_MS` (5 s). */
  pollIntervalMs?: number;
  /** How long a worker's claim on a run lasts without renewal; a dead worker's runs move on after it. Default `DEFAULT_LOCK_MS` (30 s). */
  lockDurationMs?: number;
  /**
   * How many times a run may lose its worker mid-run (a crash, SIGKILL, OOM) and be handed on;
   * once more and it is failed, its summary saying so, so a run that kills every worker it
   * reaches does not go round forever. Default `DEFAULT_MAX_STALLS` (5).
   */
  maxStalledCount?: number;
  /** How often a queued run whose job is still running elsewhere looks again (`overlap: queue`). Default 1000 ms. */
  overlapRetryMs?: number;
  /**
   * Skip scheduled runs of suspended jobs (`nightshift suspend`), read as a run is about to start,
   * so a job suspended after its tick was handed over (schedulers hand ticks over ahead of time)
   * is still skipped. Default false.
   */
  checkSuspensions?: boolean;
  /** Sends finished runs to the job's notification sinks; never fails a run. */
  notifier?: Notifier;
  /** Counts every summary this worker records (skipped runs included). Default: none. */
  metrics?: RunCounter;
  /** The ownership ledger, holds and windows' state runs read and write. Default: none. */
  state?: FleetStateStores;
  /** How this worker is named to others (a run taken over says from which). Default `<host>:<pid>`. */
  id?: string;
  /** The clock ticks are waited on by, and runs decide and record by; tests pass a shifted one. Default: the system's. */
  clock?: Clock;
  /**
   * Most targets one worker works of a run of a `splittable` action (pause); a run over more is
   * split into parts of this size on the queue, for any worker to take; the run works those no
   * worker has taken itself. Default `DEFAULT_RUN_PART_SIZE` (500).
   */
  partSize?: number;
}
