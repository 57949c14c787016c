import { actionRegistry, actions } from '../../jobs/index.js';
import { type ApiCallRecord, ApiClient } from '../api/index.js';
import {
  type ApiCredentials,
  apiCredentials,
  configuredRedis,
  policyKeys,
  type RedisTopology,
  type Settings,
  serviceRedis,
  WORKER_CLOSE_WAITS,
} from '../config/index.js';
import { type FleetStateStores, recordApiCall, within } from '../engine/index.js';
import type { Logger } from '../log/index.js';
import type { Metrics } from '../ops/index.js';
import type { PolicyJob } from '../policy/index.js';
import { createRunQueue } from '../queue/index.js';
import {
  Approvals,
  AuditTrail,
  connectRedis,
  describeRedis,
  fleetStateStores,
  LocalRateLimiter,
  PolicyKeyring,
  PolicyStore,
  RedisCheckpointStore,
  type RedisConnection,
  type RedisFleetState,
  RedisRateLimiter,
  RunCancellations,
  RunHistory,
  RunStarts,
  reconnectDelay,
  type Suspension,
  Suspensions,
} from '../store/index.js';
import { asUsage, UsageError } from './exit.js';
import { logsWritten } from './logger.js';

export { cliLogger } from './logger.js';
export { actionRegistry, actions };

/**
 * The API's address and credentials, or a UsageError naming every missing variable (exit 2,
 * before anything starts): the bearer token too when one of `jobs` runs an action that needs it.
 */
export function apiSettings(settings: Settings, jobs: readonly PolicyJob[] = []): ApiCredentials {
  const credentials = asUsage(() => apiCredentials(settings));
  const needing = jobs.filter((job) => actionRegistry.get(job.action)?.needsBearerToken);
  if (!credentials.bearerToken && needing.length > 0)
    throw new UsageError(
      `NIGHTSHIFT_BEARER_TOKEN is not set; ${needing.map((job) => `job "${job.name}" (${job.action})`).join(', ')} lists organization users, which takes the bearer token, not the API key`,
    );
  return credentials;
}

/**
 * The client actions run with: every call logged with its request ID (and counted in `metrics`
 * when given); held to `NIGHTSHIFT_API_RATE_LIMIT` when set, through the bucket every process
 * using `redis` shares, or without one through a bucket of this process's own.
 */
export function actionApiClient(
  settings: Settings,
  credentials: ApiCredentials,
  log: Logger,
  redis?: RedisConnection,
  metrics?: Metrics,
): ApiClient {
  const record = recordApiCall(log);
  return apiClient(settings, credentials, metrics ? observeApiCall(record, metrics) : record, redis);
}

/**
 * The client of a command that calls the API itself rather than through a run (`drift`, `adopt`):
 * a failed call ends the command, which says so in one line, so the call's own line is only
 * written at debug level; the rest as for an action.
 */
export function commandApiClient(settings: Settings, log: Logger): ApiClient {
  const record = recordApiCall(log);
  return apiClient(settings, apiSettings(settings), (call) => {
    if (!call.error) return record(call);
    log.debug(
      { operation: call.operation, status: call.status, requestId: call.requestId, err: call.error.toJSON() },
      'api call failed',
    );
  });
}

function apiClient(
  settings: Settings,
  credentials: ApiCredentials,
  onCall: (call: ApiCallRecord) => void,
  redis?: RedisConnection,
): ApiClient {
  const rate = settings.api.rateLimit;
  const limiter =
    rate === undefined
      ? undefined
      : redis
        ? new RedisRateLimiter(redis, { name: 'api', ratePerSecond: rate, prefix: settings.redis.prefix })
        : new LocalRateLimiter({ ratePerSecond: rate });
  return new ApiClient({
    ...credentials,
    timeoutMs: settings.api.timeoutMs,
    onCall,
    beforeCall: limiter ? (_operation, signal) => limiter.acquire(signal) : undefined,
  });
}

/** Both observers see every call; the log line comes first, and a failing one never stops the other. */
function observeApiCall(
  record: (call: ApiCallRecord) => void,
  metrics: Metrics,
): (call: ApiCallRecord) => void {
  return (call) => {
    try {
      record(call);
    } finally {
      metrics.apiCall(call);
    }
  };
}

/**
 * The policy keys of `NIGHTSHIFT_POLICY_KEY` (or its file), or undefined when none is set. A
 * file that cannot be read is bad usage (exit 2).
 */
export function configuredPolicyKeyring(settings: Settings): PolicyKeyring | undefined {
  const keys = asUsage(() => policyKeys(settings));
  return keys ? PolicyKeyring.of(keys) : undefined;
}

/**
 * The policy keys for a role that stores policies in Redis or runs them from it, or a UsageError
 * (exit 2, before anything starts) naming the variable and `why` the role needs it.
 */
export function requiredPolicyKeyring(settings: Settings, why: string): PolicyKeyring {
  const keyring = configuredPolicyKeyring(settings);
  if (!keyring)
    throw new UsageError(`NIGHTSHIFT_POLICY_KEY (or NIGHTSHIFT_POLICY_KEY_FILE) is not set; ${why}`);
  return keyring;
}

/**
 * The policy keys of `start` and `demo`, which run their scheduler and worker in one process: the
 * configured ones, else a key this process makes up, so one process needs no setup. Its worker
 * then runs only what its own scheduler stored; a run queued from elsewhere is refused, saying so.
 */
export function processPolicyKeyring(settings: Settings, log: Logger): PolicyKeyring {
  const configured = configuredPolicyKeyring(settings);
  if (configured) return configured;
  log.info(
    'NIGHTSHIFT_POLICY_KEY is not set: policies are signed with a key of this process, so its worker runs only what its own scheduler queues (set the key here and for `nightshift run` to queue runs from elsewhere)',
  );
  return PolicyKeyring.local();
}

/** Everything the Redis-backed roles share. */
export interface RedisRuntime {
  /** BullMQ's connection (and the few reads of one-shot commands). */
  redis: RedisConnection;
  /** What a service's stores write through: auto-pipelined, `redis` itself for one-shot commands. */
  stores: RedisConnection;
  prefix: string;
  history: RunHistory;
  suspensions: Suspensions;
  policies: PolicyStore;
  checkpoints: RedisCheckpointStore;
  queue: ReturnType<typeof createRunQueue>;
  /** The ownership ledger, holds and windows' state. */
  state: RedisFleetState;
  runStarts: RunStarts;
  /** Operators' requests to cancel runs. */
  cancellations: RunCancellations;
  /** Who changed what: every command a person runs appends to it. */
  audit: AuditTrail;
  /** Runs waiting for a person's approval. */
  approvals: Approvals;
  close(): Promise<void>;
}

/**
 * A connection to `topology`; a URL that cannot be used, or a password file that cannot be
 * read, is bad usage (exit 2).
 */
function connect(
  topology: () => RedisTopology,
  options: Omit<Parameters<typeof connectRedis>[0], 'topology'>,
): RedisConnection {
  const resolved = asUsage(topology);
  try {
    return connectRedis({ topology: resolved, ...options });
  } catch (error) {
    throw new UsageError(`REDIS_URL: ${(error as Error).message}`);
  }
}

/**
 * The Redis every role shares: the one the settings name (`REDIS_URL`, a cluster or Sentinels),
 * else the default local one. `oneShot` commands (run, history, suspend) fail after a few
 * reconnect attempts instead of waiting out an outage in the offline queue; services wait, since
 * Redis coming back is normal. Policies are signed and checked with `keyring` (default: the
 * configured keys, if any; without keys nothing can be stored and no stored text is vouched for).
 */
export function redisRuntime(
  settings: Settings,
  log: Logger,
  role: string,
  {
    oneShot = false,
    keyring = configuredPolicyKeyring(settings),
  }: { oneShot?: boolean; keyring?: PolicyKeyring | undefined } = {},
): RedisRuntime {
  const redis = connect(() => serviceRedis(settings), {
    log,
    role,
    ...(oneShot ? { maxRetriesPerRequest: 3, connectTimeout: 5_000 } : {}),
  });
  // A service's runs write their admissions, checkpoints, ownership ledger and summaries for every
  // run and target: on a connection of their own, whose commands of one turn of the event loop
  // leave in one write (not BullMQ's, whose scripts auto-pipelining is known to disturb). One-shot
  // commands write little.
  const stores = oneShot
    ? redis
    : connect(() => serviceRedis(settings), { log, role: `${role}-state`, enableAutoPipelining: true });
  const keyPrefix = settings.redis.prefix;
  const queue = createRunQueue({ connection: redis, prefix: keyPrefix });
  // an outage is already reported once by the Redis client; an unhandled queue error would print a stack per retry
  queue.on('error', (error) => log.debug({ err: error }, 'queue connection error'));
  return {
    redis,
    stores,
    prefix: keyPrefix,
    history: runHistory(stores, settings),
    suspensions: new Suspensions(redis, { prefix: keyPrefix }),
    policies: new PolicyStore(redis, { prefix: keyPrefix, keyring }),
    checkpoints: new RedisCheckpointStore(stores, { prefix: keyPrefix }),
    queue,
    state: fleetStateStores(stores, keyPrefix),
    runStarts: new RunStarts(stores, { prefix: keyPrefix }),
    cancellations: new RunCancellations(redis, { prefix: keyPrefix }),
    approvals: new Approvals(redis, { prefix: keyPrefix }),
    audit: new AuditTrail(redis, { prefix: keyPrefix, maxAgeMs: settings.history.days * 86_400_000 }),
    async close() {
      // with Redis down, BullMQ's close would wait for it forever
      await within(queue.close(), WORKER_CLOSE_WAITS.idleCloseMs);
      redis.disconnect();
      if (stores !== redis) stores.disconnect();
    },
  };
}

/** The run history on `redis`, kept as long as `NIGHTSHIFT_HISTORY_PER_JOB` and `_DAYS` say. */
export function runHistory(redis: RedisConnection, settings: Settings): RunHistory {
  return new RunHistory(redis, {
    prefix: settings.redis.prefix,
    retention: { maxRunsPerJob: settings.history.perJob, maxAgeMs: settings.history.days * 86_400_000 },
  });
}

/**
 * Resolves on the first SIGINT or SIGTERM. From then on SIGHUP never ends the process either:
 * the scheduler reloads its policy on it (`watchPolicy`), the other roles have nothing to reload.
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  process.on('SIGHUP', ignoreHangup);
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

function ignoreHangup(): void {}

/**
 * What `starting` resolves to, or undefined when a stop signal comes first: a role that waits
 * for Redis to start (Redis down) must still stop when told to. An abandoned start's later
 * failure (its Redis client closed) is expected and dropped.
 */
export async function unlessStopped<T>(
  starting: Promise<T>,
  signalled: Promise<NodeJS.Signals>,
): Promise<T | undefined> {
  const stopped = signalled.then(() => undefined);
  const result = await Promise.race([starting, stopped]);
  if (result === undefined) starting.catch(() => undefined);
  return result;
}

/**
 * A connection for a command's few questions to Redis: each fails after one retry and the
 * connection gives up after three tries, so a command against a Redis that does not answer says so
 * within seconds instead of waiting for it.
 */
const ONE_SHOT_REDIS = {
  maxRetriesPerRequest: 1,
  connectTimeout: 3_000,
  retryStrategy: (attempt: number) => (attempt > 2 ? null : reconnectDelay(attempt)),
};

/**
 * The suspensions `nightshift suspend` keeps in Redis, for commands that only read them (`next`):
 * undefined when REDIS_URL is not set, since such commands also work without any Redis.
 */
export async function redisSuspensions(
  settings: Settings,
): Promise<ReadonlyMap<string, Suspension> | undefined> {
  const topology = asUsage(() => configuredRedis(settings));
  if (!topology) return undefined;
  const redis = connectRedis({
    topology,
    role: 'next',
    ...ONE_SHOT_REDIS,
  });
  try {
    return await new Suspensions(redis, { prefix: settings.redis.prefix }).all();
  } catch (error) {
    throw new Error(`${describeRedis(topology)}: ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
}

/**
 * Whether Redis holds a policy in force (one a scheduler of this installation loaded, signed with
 * one of `keyring`'s keys) for a service to run while its own file has problems: undefined when it
 * does, else why not. Asked once, within a few seconds: a start on a bad file does not wait for a
 * Redis that does not answer (it is then bad usage, exit 2).
 */
export async function policyInForceStored(
  settings: Settings,
  keyring: PolicyKeyring,
): Promise<string | undefined> {
  const none = 'no policy is in force in Redis to run until it is fixed (a first start needs a valid file)';
  let redis: RedisConnection;
  try {
    redis = connectRedis({
      topology: serviceRedis(settings),
      role: 'policy-check',
      ...ONE_SHOT_REDIS,
    });
  } catch {
    return none;
  }
  try {
    const current = await new PolicyStore(redis, { prefix: settings.redis.prefix, keyring }).current();
    if (current?.text !== undefined) return undefined;
    if (current?.stored === undefined) return none;
    return `the policy in force in Redis (${current.sha.slice(0, 12)}) is not signed with this process's NIGHTSHIFT_POLICY_KEY, so it cannot run meanwhile either`;
  } catch {
    return none;
  } finally {
    redis.disconnect();
  }
}

/** The ownership ledger, holds and windows' state for runs in this process; `close()` once they are done. */
export interface InlineFleetState {
  state: FleetStateStores;
  /** The connection, for the API rate limit's shared bucket too. */
  redis: RedisConnection;
  close(): void;
}

/**
 * What workers keep in Redis about workspaces (the ownership ledger, holds, windows' state), for
 * runs in this process (`run --inline`, `plan`): undefined when REDIS_URL is not set, since those
 * commands work without any Redis. A run then records its pauses like a worker's; when Redis does
 * not answer, the run fails rather than act without its records.
 */
export function redisFleetState(settings: Settings, log?: Logger): InlineFleetState | undefined {
  const topology = asUsage(() => configuredRedis(settings));
  if (!topology) return undefined;
  const redis = connect(() => topology, {
    log,
    role: 'inline',
    ...ONE_SHOT_REDIS,
    lazyConnect: true,
  });
  return { state: fleetStateStores(redis, settings.redis.prefix), redis, close: () => redis.disconnect() };
}

/** How long an exiting service waits for its last log lines to be written. */
const LOG_DRAIN_MS = 500;

/**
 * For a service after its orderly shutdown: if anything still holds the process open (BullMQ's
 * own connections retrying a Redis that is gone), exit anyway a moment later, once its log lines
 * are written. Nothing is lost: runs were finished or handed back.
 */
export function exitOnceIdle(): void {
  setTimeout(() => void logsWritten(LOG_DRAIN_MS).then(() => process.exit()), 1_000).unref();
}

/**
 * The backstop of a service's shutdown, armed when the stop signal comes. Every step of the
 * orderly shutdown has its own bound; should one hang all the same, the process says so and
 * exits (code 1) after `limitMs`, so no orchestrator has to kill it: once its log lines are written,
 * at most LOG_DRAIN_MS later (SHUTDOWN_LIMIT_MS leaves room for it below 15 s). What was recorded in
 * Redis stays there.
 */
export function exitWithin(limitMs: number, log: Logger): void {
  setTimeout(() => {
    log.error({ limitMs }, 'shutdown did not finish in time; exiting anyway');
    void logsWritten(LOG_DRAIN_MS).then(() => process.exit(1));
  }, limitMs).unref();
}
