import type { Settings } from './settings.js';

/**
 * How long a service may take from its stop signal to its exit, whatever Redis does; a worker
 * with runs in flight and Redis up gets its grace period on top. Below the 15 s an operator
 * may count on, for the process's own exit to follow.
 */
export const SHUTDOWN_LIMIT_MS = 13_000;

/**
 * How long a closing service waits for BullMQ: a worker past its grace period, to hand the runs it
 * holds back to the queue (`handBackMs`); a worker with no run in flight, or a role's queue, to
 * close at all (`idleCloseMs`: Redis may be down, and there is nothing to hand back).
 */
export const WORKER_CLOSE_WAITS = { handBackMs: 5_000, idleCloseMs: 2_000 } as const;

/** Runs in flight get at most this long while Redis is unreachable: their progress cannot be checkpointed meanwhile. */
const REDIS_DOWN_GRACE_MS = 3_000;
/** What a worker's shutdown does after its runs are handed back: the notifier, the API client, the ops server, Redis. */
const AFTER_HAND_BACK_MS = 4_000;

/** What each step of a worker's shutdown may take, from its settings and Redis as it is now. */
export interface ShutdownBudget {
  /**
   * How long runs in flight get to finish: `NIGHTSHIFT_SHUTDOWN_GRACE_MS`, but at most 3 s while
   * Redis is unreachable (another worker takes the runs on from their checkpoints either way, so
   * waiting out the whole grace would only delay the exit).
   */
  graceMs: number;
  /** The backstop (`exitWithin`): the grace, the hand-back and the rest of the shutdown; never less than SHUTDOWN_LIMIT_MS. */
  limitMs: number;
}

export function shutdownBudget(
  settings: Pick<Settings, 'worker'>,
  redis: { ready: boolean },
): ShutdownBudget {
  const configured = settings.worker.shutdownGraceMs;
  const graceMs = redis.ready ? configured : Math.min(configured, REDIS_DOWN_GRACE_MS);
  return {
    graceMs,
    limitMs: Math.max(SHUTDOWN_LIMIT_MS, graceMs + WORKER_CLOSE_WAITS.handBackMs + AFTER_HAND_BACK_MS),
  };
}
