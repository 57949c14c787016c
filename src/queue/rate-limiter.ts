import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { DEFAULT_PREFIX, redisKeys } from './keys.js';
import { LuaScript } from './lua.js';

/** Waits until the caller may make one more call. Rejects with the signal's reason on abort. */
export interface RateLimiter {
  acquire(signal?: AbortSignal): Promise<void>;
}

/** For a process nothing limits (tests, `--inline` runs with no limit set). */
export const unlimited: RateLimiter = {
  async acquire(signal) {
    signal?.throwIfAborted();
  },
};

export interface RedisRateLimiterOptions {
  /** Names the bucket: every limiter with this name (and prefix), in any process, shares it. */
  name: string;
  /** Sustained rate, tokens per second. */
  ratePerSecond: number;
  /** Most tokens saved up while idle, i.e. the largest instant burst. Default: ratePerSecond (at least 1). */
  burst?: number;
  /** Key prefix. Default `nightshift`. */
  prefix?: string;
}

/**
 * A token bucket that takes one token or says how long until one is due, in microseconds.
 * Time comes from Redis `TIME`, so processes on machines with skewed clocks still share one
 * clock; `at` never moves backwards, so a Redis failover to a host whose clock is behind pauses
 * the refill instead of minting tokens. The key expires once a full refill is due anyway.
 * KEYS: bucket. ARGV: rate per second, burst, key TTL in ms.
 */
const TAKE = new LuaScript(`
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000000)
  at = now
end
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', at)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return wait
`);

/**
 * Settles as `promise` does, or rejects with the signal's reason when it aborts first: a Redis
 * call cannot be cancelled, but during an outage it may wait in ioredis's offline queue for as
 * long as the outage lasts, and a cancelled run must not wait with it.
 */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A rate limit shared by every process that uses the same Redis and name, e.g. one API quota for
 * a fleet of workers.
 *
 * Within a process, callers queue and only the head of the queue asks Redis, so a hundred waiting
 * calls cost one Redis round trip per token rather than a hundred, and they are served in order.
 * Between processes, whoever asks first after a token is due gets it. The price of the local queue
 * is that one process takes at most one token per round trip (about a thousand a second at 1 ms
 * per round trip), ample for API quotas of tens to hundreds of calls a second.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #args: readonly number[];
  /** Settles when the last caller in this process's queue is done. */
  #tail: Promise<void> = Promise.resolve();

  constructor(redis: Redis, options: RedisRateLimiterOptions) {
    if (options.name === '') throw new RangeError('RedisRateLimiter: name must not be empty');
    const rate = options.ratePerSecond;
    if (!(Number.isFinite(rate) && rate > 0)) {
      throw new RangeError(`RedisRateLimiter: ratePerSecond must be a positive number, got ${rate}`);
    }
    const burst = options.burst ?? Math.max(1, rate);
    if (!(Number.isFinite(burst) && burst >= 1)) {
      throw new RangeError(`RedisRateLimiter: burst must be a number of at least 1, got ${burst}`);
    }
    this.#redis = redis;
    this.#key = redisKeys(options.prefix ?? DEFAULT_PREFIX).rateLimit(options.name);
    this.#args = [rate, burst, Math.ceil((burst / rate) * 1000) + 1000];
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const previous = this.#tail;
    let done = () => {};
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    // The next caller waits for both, so leaving the queue early (abort) never lets it overtake.
    this.#tail = previous.then(() => mine);
    try {
      await abortable(previous, signal);
      for (;;) {
        signal?.throwIfAborted();
        const waitUs = Number(await abortable(TAKE.run(this.#redis, [this.#key], this.#args), signal));
        if (waitUs <= 0) return;
        try {
          await sleep(Math.ceil(waitUs / 1000), undefined, { signal });
        } catch (error) {
          signal?.throwIfAborted(); // the caller's reason, not the timer's generic AbortError
          throw error;
        }
      }
    } finally {
      done();
    }
  }
}
