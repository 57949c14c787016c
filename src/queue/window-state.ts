import type { Redis } from 'ioredis';
import { type WindowState, WindowStateSchema, type WindowStateStore } from '../runs/window-state.js';
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
