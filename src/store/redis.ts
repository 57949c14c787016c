import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisAddress, RedisTopology } from '../config/index.js';
import { NightshiftError } from '../errors/index.js';
import { type Logger, silentLogger } from '../log/index.js';

/** The longest wait between two reconnection attempts. */
export const MAX_RECONNECT_DELAY_MS = 5_000;

/**
 * A connection to one Redis (by URL or through Sentinels) or to a Redis Cluster. Both answer
 * every command nightshift sends, `status`, `duplicate()` and pipelines; a Cluster routes each
 * command by its key's slot, which is why every key nightshift owns shares one hash tag.
 */
export type RedisConnection = Redis | Cluster;

/** Any ioredis option passes through, bar Sentinel's `role`, whose name we use for our own. */
export interface CreateRedisOptions extends Omit<RedisOptions, 'role'> {
  /** `redis://` or `rediss://` (TLS), with any credentials and database number. */
  url: string;
  /** Where the outage and recovery lines go. Default: nowhere. */
  log?: Logger;
  /** What this connection is for (`scheduler`, `worker`, `cli`…), on every log line it writes. */
  role: string;
}

/** A Redis URL that cannot be used. The message never repeats the URL, which may hold a password. */
export class RedisUrlError extends NightshiftError {
  override name = 'RedisUrlError';
  readonly code = 'NS_REDIS_URL_INVALID';
}

/**
 * The URL with its passwords replaced by `***`, fit for logs and error messages: the one in the
 * authority, and any query parameter naming one (ioredis reads `?password=` and
 * `?sentinelPassword=` as options).
 */
export function safeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const key of [...parsed.searchParams.keys()]) {
      if (/password/i.test(key)) parsed.searchParams.set(key, '***');
    }
    return parsed.toString();
  } catch {
    // URL cannot find the password, so mask from the user's `:` to the authority's last `@`.
    return url.replace(/\/\/([^:/@]*):[^/]*@/, '//$1:***@');
  }
}

/**
 * Through Sentinels, attempts stay at most this far apart: the primary's replacement is named
 * seconds after it dies, and a client waiting out a long backoff then adds that wait to every
 * failover. Each attempt asks a Sentinel first, which costs it next to nothing.
 */
export const MAX_SENTINEL_RECONNECT_DELAY_MS = 250;

/** Exponential from 50 ms, capped at MAX_RECONNECT_DELAY_MS: quick after a blip, gentle in an outage. */
export function reconnectDelay(attempt: number): number {
  return Math.min(50 * 2 ** Math.min(Math.max(attempt - 1, 0), 16), MAX_RECONNECT_DELAY_MS);
}

function checkUrl(url: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new RedisUrlError('Redis URL is not a valid URL; expected redis://host:port or rediss://host:port');
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new RedisUrlError(
      `Redis URL has scheme "${protocol}"; expected redis:// or rediss:// (TLS), e.g. redis://localhost:6379`,
    );
  }
}

function errorCode(error: unknown): string {
  const e = error as { code?: unknown; errors?: { code?: unknown }[]; name?: unknown };
  // Node reports a refused dual-stack connect (localhost → ::1 and 127.0.0.1) as an AggregateError.
  const code = e.code ?? e.errors?.[0]?.code ?? e.name;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

/**
 * What Redis answered when it refused the connection (a wrong password: `WRONGPASS …`), from the
 * error or, for a cluster, the last node's: Redis's own words, which never repeat the password.
 */
export function redisRefusal(error: unknown): string | undefined {
  const e = error as { name?: unknown; message?: unknown; lastNodeError?: unknown } | undefined;
  if (e?.name === 'ReplyError' && typeof e.message === 'string') return e.message;
  return e?.lastNodeError === undefined ? undefined : redisRefusal(e.lastNodeError);
}

/**
 * A client fit for BullMQ (which requires `maxRetriesPerRequest: null` for its blocking calls):
 * it reconnects forever, and commands wait in the offline queue meanwhile, so a Redis restart
 * delays work rather than failing it. An outage logs one warning when it starts and one info line
 * when it ends, never one line per attempt; every `error` event is handled, so none reaches
 * ioredis's "Unhandled error event" fallback.
 */
export function createRedis({ url, log = silentLogger, role, ...extra }: CreateRedisOptions): Redis {
  checkUrl(url);
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: reconnectDelay,
    connectionName: `nightshift:${role}`,
    ...extra,
  });
  // 'client', not 'role': a service's logger already carries its role
  return reportOutages(redis, log, { redis: safeRedisUrl(url), client: role });
}

/** `createRedis`'s options, for any topology. */
export interface ConnectRedisOptions extends Omit<CreateRedisOptions, 'url'> {
  topology: RedisTopology;
}

/**
 * A connection made like `createRedis`'s (reconnecting forever unless `retryStrategy` says
 * otherwise, one log line per outage) to the topology the settings name: one Redis by URL, a
 * Redis Cluster (its nodes found from any one of `nodes`), or the primary the Sentinels name,
 * followed through a failover.
 */
export function connectRedis({
  topology,
  log = silentLogger,
  role,
  ...extra
}: ConnectRedisOptions): RedisConnection {
  if (topology.kind === 'url') {
    // a user or password given apart: the schema refuses one the URL holds too
    const { url, username, password } = topology;
    return createRedis({
      url,
      log,
      role,
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
      ...extra,
    });
  }
  const context = { redis: describeRedis(topology), client: role };
  const {
    retryStrategy = topology.kind === 'sentinel'
      ? (attempt: number) => Math.min(reconnectDelay(attempt), MAX_SENTINEL_RECONNECT_DELAY_MS)
      : reconnectDelay,
    lazyConnect,
    ...options
  } = extra;
  const shared = { maxRetriesPerRequest: null, connectionName: `nightshift:${role}`, ...options };
  // A one-shot client (a bounded `maxRetriesPerRequest`) fails its commands after a few attempts
  // on one Redis; a cluster's or the Sentinels' own loop never counts towards that, so it gives
  // up on its third attempt instead, and the commands fail with its error.
  const oneShot = typeof options.maxRetriesPerRequest === 'number';
  const topologyRetry = (attempt: number) => (oneShot && attempt > 2 ? null : retryStrategy?.(attempt));
  const tls = topology.tls && { ...(topology.tls.ca ? { ca: topology.tls.ca } : {}) };
  if (topology.kind === 'cluster') {
    const cluster = new Cluster(topology.nodes.map(nodeAddress), {
      clusterRetryStrategy: topologyRetry,
      enableReadyCheck: true,
      lazyConnect,
      // with TLS, a node is reached by the name it was given, which its certificate names (the
      // address a lookup gives would not match)
      ...(tls
        ? {
            dnsLookup: (address: string, done: (error: null, address: string) => void) => done(null, address),
          }
        : {}),
      // the nodes' connections do not reconnect on their own: the cluster reconnects them all
      redisOptions: {
        ...shared,
        username: topology.username,
        password: topology.password,
        ...(tls ? { tls } : {}),
      },
    });
    return reportOutages(cluster, log, context);
  }
  const redis = new Redis({
    ...shared,
    sentinels: topology.sentinels.map(nodeAddress),
    name: topology.name,
    username: topology.username,
    password: topology.password,
    sentinelPassword: topology.sentinelPassword,
    enableReadyCheck: true,
    lazyConnect,
    retryStrategy,
    sentinelRetryStrategy: topologyRetry,
    ...(tls ? { tls, enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
    // not ioredis's `failoverDetector`: its +switch-master handler, arriving while the client is
    // reconnecting, closed the client for good (5.11.1: every command then fails "Connection is
    // closed"); attempts at most 250 ms apart reach the new primary within that of its election
  });
  return reportOutages(redis, log, context);
}

function nodeAddress({ host, port }: RedisAddress): { host: string; port: number } {
  return { host, port };
}

/**
 * Whether a command failed because Redis could not be reached, as a one-shot client reports it:
 * ioredis's own errors for one Redis, a cluster and Sentinels that all stayed silent.
 */
export function isRedisUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    error.name === 'ClusterAllFailedError' ||
    error.message === 'None of startup nodes is available' ||
    error.message.startsWith('All sentinels are unreachable')
  );
}

/** Where a topology is, for logs and errors: never a password. */
export function describeRedis(topology: RedisTopology): string {
  const list = (addresses: readonly RedisAddress[]) =>
    addresses
      .map(({ host, port }) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`))
      .join(',');
  switch (topology.kind) {
    case 'url':
      return safeRedisUrl(topology.url);
    case 'cluster':
      return `cluster ${list(topology.nodes)}`;
    case 'sentinel':
      return `primary "${topology.name}" of sentinels ${list(topology.sentinels)}`;
  }
}

/**
 * One warning when an outage starts and one info line when it ends, never one line per attempt;
 * every `error` event is handled, so none reaches ioredis's "Unhandled error event" fallback.
 */
function reportOutages<T extends RedisConnection>(
  client: T,
  log: Logger,
  context: Record<string, string>,
): T {
  let down = false;
  client.on('error', (error: unknown) => {
    if (down) return;
    down = true;
    const refused = redisRefusal(error);
    log.warn(
      { ...context, code: errorCode(error), ...(refused ? { refused } : {}) },
      'Redis unreachable; retrying',
    );
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    log.info(context, 'Redis connection restored');
  });
  return client;
}

/**
 * Whether Redis answers PING within `timeoutMs`, for a readiness probe. A client that is not
 * ready (still connecting, or reconnecting) answers false at once instead of queueing a PING
 * behind the outage.
 */
export async function pingRedis(redis: RedisConnection, timeoutMs: number): Promise<boolean> {
  if (redis.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([redis.ping().then((reply) => reply === 'PONG'), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
