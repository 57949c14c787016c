import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script sent by its SHA1 and loaded only when Redis answers NOSCRIPT (first use, or after
 * a restart or failover emptied the script cache), so hot paths such as the rate limiter do not
 * resend their source on every call. Unlike `defineCommand`, it adds nothing to a client that
 * other modules share.
 */
export class LuaScript {
  readonly #source: string;
  readonly #sha: string;

  constructor(source: string) {
    this.#source = source;
    this.#sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.#sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.#source, keys.length, ...keys, ...args);
    }
  }
}

/** Extends a run lock's TTL if the run still holds it. KEYS: the lock. ARGV: run id, TTL ms. */
export const RENEW_IF_OWNER = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`,
);

/** Deletes a run lock if the run still holds it. KEYS: the lock. ARGV: run id. */
export const DELETE_IF_OWNER = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
);
