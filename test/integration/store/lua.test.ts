import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LuaScript, SET_TICK_IF_LATER } from '../../../src/store/lua.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => ({ redis } = client));

/** A script Redis has never seen: its source (hence its SHA) is new to this test. */
const unseen = (body: string) => new LuaScript(`-- ${randomUUID()}\n${body}`);

/** The client, counting the pipelines it builds (each one is a round trip) and the scripts it sends. */
function counting(client: Redis): { client: Redis; pipelines: () => number; scripts: () => number } {
  let pipelines = 0;
  let scripts = 0;
  const counted = new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'pipeline') pipelines++;
        if (property === 'evalsha' || property === 'eval') scripts++;
        return value.apply(target, args);
      };
    },
  });
  return { client: counted, pipelines: () => pipelines, scripts: () => scripts };
}

describe('LuaScript', () => {
  it('runs a script Redis has not cached (NOSCRIPT) by sending its source, then by its SHA', async () => {
    const key = `${uniquePrefix('lua')}:n`;
    const script = unseen(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);
    expect(await script.run(redis, [key], [2])).toBe(2);
    expect(await script.run(redis, [key], [3])).toBe(5);
  });

  it('runs a batch in one pipeline, each result in order; a second pipeline only while Redis lacks the script', async () => {
    const prefix = uniquePrefix('lua');
    const script = unseen(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const calls = [1, 2, 3].map((n) => ({ keys: [`${prefix}:${n}`], args: [n * 10] }));
    const { client, pipelines } = counting(redis);

    expect(await script.runEach(client, calls)).toEqual([10, 20, 30]);
    expect(pipelines()).toBe(2);
    expect(await script.runEach(client, calls)).toEqual([20, 40, 60]);
    expect(pipelines()).toBe(3);
  });

  it('rejects a batch with the error of a call that failed, after running the others', async () => {
    const prefix = uniquePrefix('lua');
    await redis.set(`${prefix}:text`, 'not a number');
    const script = unseen(`return redis.call('INCR', KEYS[1])`);
    await expect(
      script.runEach(redis, [
        { keys: [`${prefix}:a`], args: [] },
        { keys: [`${prefix}:text`], args: [] },
      ]),
    ).rejects.toThrow(/not an integer/);
    expect(await redis.get(`${prefix}:a`)).toBe('1');
  });

  it('sends nothing for an empty batch', async () => {
    const { client, pipelines, scripts } = counting(redis);
    expect(await SET_TICK_IF_LATER.runEach(client, [])).toEqual([]);
    expect([pipelines(), scripts()]).toEqual([0, 0]);
  });
});
