/**
 * What a component falls back on when whoever wires it gives nothing: named once, here, so a
 * default is found and changed in one place (the Settings' own defaults are in schema.ts).
 */

const DAY_MS = 86_400_000;

/** How long a run's checkpoint outlives its last save. */
export const CHECKPOINT_TTL_MS = 7 * DAY_MS;
/** How long a run's start record outlives its admission. */
export const RUN_START_TTL_MS = 7 * DAY_MS;
/** How long a split run's stored listing for its parts outlives its last save. */
export const RUN_LISTING_TTL_MS = DAY_MS;
/** How long a stored policy text outlives its last use. */
export const POLICY_TTL_MS = 30 * DAY_MS;
/** How long a job's notification state (what each sink was last told) is kept. */
export const NOTIFY_STATE_TTL_MS = 90 * DAY_MS;
/** How far back a workspace's timeline goes. */
export const WORKSPACE_HISTORY_MAX_AGE_MS = 30 * DAY_MS;
/** How long the ownership ledger keeps closed paused intervals (a year's savings, and some). */
export const PAUSED_INTERVAL_RETENTION_MS = 400 * DAY_MS;
/** How many hold events the hold log keeps. */
export const HOLD_LOG_LENGTH = 1_000;
/** The fleet listing kept for the console is refreshed at least this often. */
export const FLEET_LISTING_REFRESH_MS = 5 * 60_000;

/** How long `/readyz` waits for Redis to answer a PING. */
export const REDIS_READINESS_TIMEOUT_MS = 1_000;
/** How long `/metrics` waits for the queue's counts. */
export const METRICS_QUEUE_TIMEOUT_MS = 2_000;
/** How long a console page waits for what it reads from Redis. */
export const CONSOLE_READ_TIMEOUT_MS = 5_000;
/** How often a console page refreshes itself. */
export const CONSOLE_REFRESH_MS = 5_000;

/** How many requests the simulator's request log keeps. */
export const SIM_REQUEST_LOG_LIMIT = 10_000;

/** A run's progress on a terminal: redrawn at most this often… */
export const PROGRESS_REDRAW_MS = 100;
/** …and, without a terminal, a line at most this often… */
export const PROGRESS_LINE_MS = 5_000;
/** …its clock ticking this often. */
export const PROGRESS_TICK_MS = 1_000;
