import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { DEFAULT_PREFIX, redisKeys } from './keys.js';

export interface PolicyStoreOptions {
  /** Key prefix. Default `nightshift`. */
  prefix?: string;
  /** How long a policy is kept after its last `put`. Default 30 days. */
  ttlMs?: number;
}

/** A policy text's identity: its sha256 in hex, as stored, logged and carried by runs (`policySha`). */
export const policySha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Policy texts by content hash, so a run enqueued under one version of the policy file executes
 * that version even after the file changes. Texts hold `${VAR}` references, never their values:
 * each worker interpolates with its own environment.
 */
export class PolicyStore {
  readonly #redis: Redis;
  readonly #keys: ReturnType<typeof redisKeys>;
  readonly #ttlMs: number;

  constructor(redis: Redis, options: PolicyStoreOptions = {}) {
    const ttlMs = options.ttlMs ?? 30 * 24 * 3_600_000;
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
      throw new RangeError(`PolicyStore: ttlMs must be a positive integer, got ${ttlMs}`);
    }
    this.#redis = redis;
    this.#keys = redisKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#ttlMs = ttlMs;
  }

  /** Stores the text (again) and returns its sha256 in hex. */
  async put(text: string): Promise<string> {
    const sha = policySha(text);
    await this.#redis.set(this.#keys.policy(sha), text, 'PX', this.#ttlMs);
    return sha;
  }

  /** The text stored under `sha`, or undefined if it expired or does not match its hash. */
  async get(sha: string): Promise<string | undefined> {
    const text = await this.#redis.get(this.#keys.policy(sha));
    return text !== null && policySha(text) === sha ? text : undefined;
  }
}
