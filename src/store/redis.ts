import { Redis, type RedisOptions } from 'ioredis';
import { NightshiftError } from '../errors/index.js';
import { type Logger, silentLogger } from '../log/index.js';

/** The longest wait between two reconnection attempts. */
export const MAX_RECONNECT_DELAY_MS = 5_000;

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
 * A client fit for BullMQ (which requires `maxRetriesPerRequest: null` for its blocking calls):
 * it reconnects forever, and commands wait in the offline queue meanwhile, so a Redis restart
 * delays work rather than failing it. An outage logs one warning when it starts and one info line
 * when it ends, never one line per attempt; every `error` event is handled, so none reaches
 * ioredis's "Unhandled error event" fallback.
 */
export function createRedis({ url, log = silentLogger, role, ...extra }: CreateRedisOptions): Redis {
  checkUrl(url);
  // 'client', not 'role': a service's logger already carries its role
  const context = { redis: safeRedisUrl(url), client: role };
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: reconnectDelay,
    connectionName: `nightshift:${role}`,
    ...extra,
  });
  let down = false;
  redis.on('error', (error: unknown) => {
    if (down) return;
    down = true;
    log.warn({ ...context, code: errorCode(error) }, 'Redis unreachable; retrying');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.info(context, 'Redis connection restored');
  });
  return redis;
}

/**
 * Whether Redis answers PING within `timeoutMs`, for a readiness probe. A client that is not
 * ready (still connecting, or reconnecting) answers false at once instead of queueing a PING
 * behind the outage.
 */
export async function pingRedis(redis: Redis, timeoutMs: number): Promise<boolean> {
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
