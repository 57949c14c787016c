import { DEFAULT_REDIS_PREFIX } from '../config/index.js';
import { type Clock, systemClock } from '../time/index.js';
import { type RedisKeys, redisKeys } from './keys.js';
import type { RedisConnection } from './redis.js';

/** Where a store's keys live. */
export interface StoreOptions {
  /** Key prefix, the engine's. Default `nightshift`. */
  prefix?: string;
  /** Where the times the store records and ages by are read. Default: the system's. */
  clock?: Clock;
}

/** A store on a connection it shares with others, and the keys under its prefix. */
export abstract class RedisStore {
  protected readonly redis: RedisConnection;
  protected readonly keys: RedisKeys;
  protected readonly clock: Clock;

  constructor(
    redis: RedisConnection,
    { prefix = DEFAULT_REDIS_PREFIX, clock = systemClock }: StoreOptions = {},
  ) {
    this.redis = redis;
    this.keys = redisKeys(prefix);
    this.clock = clock;
  }
}

/** `value` when it is a whole number of at least 1; a RangeError naming the option otherwise. */
export function positiveInteger(option: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${option} must be a positive integer, got ${value}`);
  return value;
}
