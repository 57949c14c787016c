import { DEFAULT_REDIS_PREFIX } from '../config/index.js';
import { abortable } from '../engine/index.js';
import { type Clock, systemClock } from '../time/index.js';
import { redisKeys } from './keys.js';
import { TAKE_TOKEN } from './lua.js';
import type { RedisConnection } from './redis.js';

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
  /** What waits for the next token. Default: the system's clock. */
  clock?: Clock;
}

/** The bucket's shape, checked once: a rate above zero and a burst of at least one. */
function bucketShape(what: string, rate: number, burst: number | undefined): { rate: number; burst: number } {
  if (!(Number.isFinite(rate) && rate > 0)) {
    throw new RangeError(`${what}: ratePerSecond must be a positive number, got ${rate}`);
  }
  const shaped = burst ?? Math.max(1, rate);
  if (!(Number.isFinite(shaped) && shaped >= 1)) {
    throw new RangeError(`${what}: burst must be a number of at least 1, got ${shaped}`);
  }
  return { rate, burst: shaped };
}

/**
 * Callers of one process queue, and only the head of the queue asks the bucket (`take`), so they
 * are served in order and a hundred waiting calls cost one look per token rather than a hundred.
 */
abstract class QueuedRateLimiter implements RateLimiter {
  /** Settles when the last caller in this process's queue is done. */
  #tail: Promise<void> = Promise.resolve();
  protected readonly clock: Clock;

  constructor(clock: Clock = systemClock) {
    this.clock = clock;
  }

  /** Takes a token and answers 0, or answers how many milliseconds until one is due. */
  protected abstract take(signal: AbortSignal | undefined): Promise<number>;

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
        const waitMs = await this.take(signal);
        if (waitMs <= 0) return;
        await this.clock.sleep(waitMs, signal);
      }
    } finally {
      done();
    }
  }
}

/**
 * A rate limit shared by every process that uses the same Redis and name, e.g. one API quota for
 * a fleet of workers. Between processes, whoever asks first after a token is due gets it. Since
 * only the head of a process's queue asks Redis, one process takes at most one token per round
 * trip (about a thousand a second at 1 ms per round trip), ample for API quotas of tens to
 * hundreds of calls a second.
 */
export class RedisRateLimiter extends QueuedRateLimiter {
  readonly #redis: RedisConnection;
  readonly #name: string;
  readonly #key: string;
  readonly #args: readonly number[];

  constructor(redis: RedisConnection, options: RedisRateLimiterOptions) {
    super(options.clock);
    if (options.name === '') throw new RangeError('RedisRateLimiter: name must not be empty');
    const { rate, burst } = bucketShape('RedisRateLimiter', options.ratePerSecond, options.burst);
    this.#redis = redis;
    this.#name = options.name;
    this.#key = redisKeys(options.prefix ?? DEFAULT_REDIS_PREFIX).rateLimit(options.name);
    this.#args = [rate, burst, Math.ceil((burst / rate) * 1000) + 1000];
  }

  protected async take(signal: AbortSignal | undefined): Promise<number> {
    let waitUs: number;
    try {
      waitUs = Number(await abortable(TAKE_TOKEN.run(this.#redis, [this.#key], this.#args), signal));
    } catch (error) {
      signal?.throwIfAborted();
      // a call that cannot take its token must say why: the API was never asked (no `cause`,
      // which the API client would report in this message's place)
      throw new Error(`rate limit "${this.#name}": Redis did not answer: ${(error as Error).message}`);
    }
    return Math.ceil(waitUs / 1000);
  }
}

export interface LocalRateLimiterOptions {
  /** Sustained rate, tokens per second. */
  ratePerSecond: number;
  /** Most tokens saved up while idle, i.e. the largest instant burst. Default: ratePerSecond (at least 1). */
  burst?: number;
  /** Where the bucket's time is read and waited on (monotonic). Default: the system's. */
  clock?: Clock;
}

/**
 * The same token bucket kept in this process alone: for a process with no Redis to share one
 * through (`run --inline`, `plan`), which then stays under the rate by itself.
 */
export class LocalRateLimiter extends QueuedRateLimiter {
  readonly #rate: number;
  readonly #burst: number;
  #tokens: number;
  #at: number;

  constructor(options: LocalRateLimiterOptions) {
    super(options.clock);
    ({ rate: this.#rate, burst: this.#burst } = bucketShape(
      'LocalRateLimiter',
      options.ratePerSecond,
      options.burst,
    ));
    this.#tokens = this.#burst;
    this.#at = this.clock.monotonic();
  }

  protected async take(): Promise<number> {
    const now = this.clock.monotonic();
    if (now > this.#at) {
      this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) * this.#rate) / 1000);
      this.#at = now;
    }
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.#tokens) * 1000) / this.#rate);
  }
}
