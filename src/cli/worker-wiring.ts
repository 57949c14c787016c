import { DEFAULT_LOCK_MS, type Settings } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { RunWorkerOptions, RunWorkerStores } from '../queue/index.js';
import {
  Approvals,
  FindingsLedger,
  type RedisConnection,
  RedisFleetListings,
  RunLeases,
  RunListings,
  RunLock,
  type RunStarts,
} from '../store/index.js';
import { type Clock, systemClock } from '../time/index.js';

/** How a worker behaves, as the Settings say. */
export function resolveWorkerOptions(
  settings: Settings,
): Pick<
  RunWorkerOptions,
  'concurrency' | 'pollIntervalMs' | 'lockDurationMs' | 'maxStalledCount' | 'partSize'
> {
  const { worker } = settings;
  return {
    concurrency: worker.concurrency,
    pollIntervalMs: worker.pollIntervalMs,
    lockDurationMs: worker.lockMs,
    maxStalledCount: worker.maxStalls,
    partSize: worker.partSize,
  };
}

export interface WorkerStoresOptions {
  /** What the stores write through (a service's auto-pipelined connection). */
  connection: RedisConnection;
  prefix: string;
  /** The worker's claim on a run (`RunWorkerOptions.lockDurationMs`): the stores' TTLs follow it. Default `DEFAULT_LOCK_MS`. */
  lockDurationMs?: number | undefined;
  /** Where the run lock records each run's first start. Default: none. */
  starts?: RunStarts | undefined;
  log: Logger;
  /** The worker's clock. Default: the system's. */
  clock?: Clock | undefined;
}

/** A worker's own stores, their TTLs fitted to its claim on a run. */
export function workerStores(options: WorkerStoresOptions): RunWorkerStores {
  const { connection, prefix, log, starts } = options;
  const claimMs = options.lockDurationMs ?? DEFAULT_LOCK_MS;
  const clock = options.clock ?? systemClock;
  return {
    connection,
    // Three times the worker's claim on a run: when a worker dies, BullMQ's claim expires after
    // `lockDurationMs` and the stalled-job check hands the run on up to two check intervals (one
    // `lockDurationMs`) later; the run lock must still name the run then, so the worker that
    // resumes it takes it over and a run of the job's next tick (`overlap: queue`) keeps waiting
    // instead of slipping in between.
    lock: new RunLock(connection, { prefix, ttlMs: 3 * claimMs, log, starts }),
    starts,
    // An execution's lease lives as long as BullMQ's claim: by the time BullMQ hands a dead
    // worker's run on, its lease has run out too, and a takeover waits for nothing.
    leases: new RunLeases(connection, { prefix, clock, ttlMs: claimMs, lockTtlMs: 3 * claimMs, log }),
    findings: new FindingsLedger(connection, { prefix, clock }),
    lastListings: new RedisFleetListings(connection, { prefix, clock }),
    runListings: new RunListings(connection, { prefix, clock }),
    approvals: new Approvals(connection, { prefix, clock }),
  };
}
