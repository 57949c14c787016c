import type { Redis } from 'ioredis';
import { type WindowState, WindowStateSchema, type WindowStateStore } from '../engine/window-state.js';
import { parseJson } from './json.js';
import { DEFAULT_PREFIX, redisKeys } from './keys.js';

/**
 * Each window's reconciliation state in one Redis hash (window → JSON). Only one reconciliation
 * of a window runs at a time (the run lock), so plain writes suffice.
 */
export class RedisWindowStates implements WindowStateStore {
  readonly #redis: Redis;
  readonly #key: string;

  constructor(redis: Redis, options: { prefix?: string } = {}) {
    this.#redis = redis;
    this.#key = redisKeys(options.prefix ?? DEFAULT_PREFIX).windowState;
  }

  async get(window: string): Promise<WindowState | undefined> {
    return parseState(await this.#redis.hget(this.#key, window));
  }

  async save(window: string, state: WindowState): Promise<void> {
    await this.#redis.hset(this.#key, window, JSON.stringify(WindowStateSchema.parse(state)));
  }

  /** Forgets the state of every window not in `windows` (removed from the policy): its gauge goes too. */
  async retain(windows: readonly string[]): Promise<void> {
    const keep = new Set(windows);
    const gone = (await this.#redis.hkeys(this.#key)).filter((window) => !keep.has(window));
    if (gone.length > 0) await this.#redis.hdel(this.#key, ...gone);
  }

  /** Every window's state, by name (the drift gauge reads them at each scrape). */
  async all(): Promise<Map<string, WindowState>> {
    const fields = await this.#redis.hgetall(this.#key);
    const states = new Map<string, WindowState>();
    for (const [window, text] of Object.entries(fields)) {
      const state = parseState(text);
      if (state) states.set(window, state);
    }
    return states;
  }
}

function parseState(text: string | null): WindowState | undefined {
  if (text === null) return undefined;
  const parsed = WindowStateSchema.safeParse(parseJson(text));
  return parsed.success ? parsed.data : undefined;
}
