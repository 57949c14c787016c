import { type WindowState, WindowStateSchema, type WindowStateStore } from '../engine/index.js';
import { parseJson } from './json.js';
import { RedisStore } from './redis-store.js';

/**
 * Each window's reconciliation state in one Redis hash (window → JSON). Only one reconciliation
 * of a window runs at a time (the run lock), so plain writes suffice.
 */
export class RedisWindowStates extends RedisStore implements WindowStateStore {
  async get(window: string): Promise<WindowState | undefined> {
    return parseState(await this.redis.hget(this.keys.windowState, window));
  }

  async save(window: string, state: WindowState): Promise<void> {
    await this.redis.hset(this.keys.windowState, window, JSON.stringify(WindowStateSchema.parse(state)));
  }

  /** Forgets the state of every window not in `windows` (removed from the policy): its gauge goes too. */
  async retain(windows: readonly string[]): Promise<void> {
    const keep = new Set(windows);
    const gone = (await this.redis.hkeys(this.keys.windowState)).filter((window) => !keep.has(window));
    if (gone.length > 0) await this.redis.hdel(this.keys.windowState, ...gone);
  }

  /** Every window's state, by name (the drift gauge reads them at each scrape). */
  async all(): Promise<Map<string, WindowState>> {
    const fields = await this.redis.hgetall(this.keys.windowState);
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
