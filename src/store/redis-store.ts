import { DEFAULT_REDIS_PREFIX } from '../config/index.js';
import { type RedisKeys, redisKeys } from './keys.js';
import type { RedisConnection } from './redis.js';

/** Where a store's keys live. */
export interface StoreOptions {
  /** Key prefix, the engine's. Default `nightshift`. */
  prefix?: string;
}

/** A store on a connection it shares with others, and the keys under its prefix. */
export abstract class RedisStore {
  protected readonly redis: RedisConnection;
  protected readonly keys: RedisKeys;

  constructor(redis: RedisConnection, { prefix = DEFAULT_REDIS_PREFIX }: StoreOptions = {}) {
    this.redis = redis;
    this.keys = redisKeys(prefix);
  }
}

/** `value` when it is a whole number of at least 1; a RangeError naming the option otherwise. */
export function positiveInteger(option: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${option} must be a positive integer, got ${value}`);
  return value;
}
