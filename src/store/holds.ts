import { z } from 'zod';
import { HOLD_LOG_LENGTH } from '../config/index.js';
import { type Hold, type HoldReader, HoldSchema } from '../engine/index.js';
import { parseJson } from './json.js';
import { DELETE_HOLD, PUT_HOLD } from './lua.js';
import type { RedisConnection } from './redis.js';
import { RedisStore, type StoreOptions } from './redis-store.js';

export interface HoldsOptions extends StoreOptions {
  /** How many hold events the log keeps. Default 1000. */
  logLength?: number;
}

/** One line of the hold log: a hold placed, released or run out. */
export const HoldEventSchema = z.object({
  at: z.iso.datetime(),
  event: z.enum(['held', 'released', 'expired']),
  hold: HoldSchema,
  /** Who released it (`released` only). */
  by: z.string().optional(),
});
export type HoldEvent = z.infer<typeof HoldEventSchema>;

/**
 * Holds in Redis, shared by every process: a hash by pattern, and a log of every hold placed,
 * released or run out. A hold past its `until` has no effect from that instant; the first read
 * after it removes it and logs it as expired.
 */
export class Holds extends RedisStore implements HoldReader {
  readonly #logLength: number;

  constructor(redis: RedisConnection, options: HoldsOptions = {}) {
    super(redis, options);
    this.#logLength = options.logLength ?? HOLD_LOG_LENGTH;
  }

  async place(hold: Hold): Promise<void> {
    const event: HoldEvent = { at: hold.createdAt, event: 'held', hold };
    await PUT_HOLD.run(
      this.redis,
      [this.keys.holds, this.keys.holdLog],
      [hold.pattern, JSON.stringify(HoldSchema.parse(hold)), JSON.stringify(event), this.#logLength],
    );
  }

  /** Releases the hold on exactly `pattern`; the released hold, or undefined if there was none. */
  async release(pattern: string, by: string, now: Date): Promise<Hold | undefined> {
    for (;;) {
      const text = await this.redis.hget(this.keys.holds, pattern);
      if (text === null) return undefined;
      const hold = parseHold(text);
      if (!hold) {
        await this.redis.hdel(this.keys.holds, pattern);
        return undefined;
      }
      const event: HoldEvent = { at: now.toISOString(), event: 'released', hold, by };
      if (await this.#delete(pattern, text, event)) return hold;
    }
  }

  /**
   * The holds in force at `now`, oldest first. Expired ones are removed (and logged) on the way,
   * unless `readOnly`: what plans, drift and scrapes read must change nothing.
   */
  async active(now: Date, { readOnly = false }: { readOnly?: boolean } = {}): Promise<Hold[]> {
    const fields = await this.redis.hgetall(this.keys.holds);
    const holds: Hold[] = [];
    for (const [pattern, text] of Object.entries(fields)) {
      const hold = parseHold(text);
      if (hold && Date.parse(hold.until) > now.getTime()) {
        holds.push(hold);
        continue;
      }
      if (readOnly) continue;
      // a record nobody can read holds nothing; one past its time is logged as expired once
      if (hold) await this.#delete(pattern, text, { at: hold.until, event: 'expired', hold });
      else await this.redis.hdel(this.keys.holds, pattern);
    }
    return holds.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** The newest hold events first. */
  async log(limit = 100): Promise<HoldEvent[]> {
    const lines = await this.redis.lrange(this.keys.holdLog, 0, limit - 1);
    return lines.flatMap((line) => {
      const parsed = HoldEventSchema.safeParse(parseJson(line));
      return parsed.success ? [parsed.data] : [];
    });
  }

  async #delete(pattern: string, text: string, event: HoldEvent): Promise<boolean> {
    const deleted = await DELETE_HOLD.run(
      this.redis,
      [this.keys.holds, this.keys.holdLog],
      [pattern, text, JSON.stringify(event), this.#logLength],
    );
    return deleted === 1;
  }
}

function parseHold(text: string): Hold | undefined {
  const parsed = HoldSchema.safeParse(parseJson(text));
  return parsed.success ? parsed.data : undefined;
}
