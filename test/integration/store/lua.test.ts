import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LuaScript, loadScripts, RENEW_IF_OWNER, SET_TICK_IF_LATER } from '../../../src/store/lua.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => ({ redis } = client));

/** A script Redis has never seen: its source (hence its SHA) is new to this test. */
const unseen = (body: string) => new LuaScript(`-- ${randomUUID()}\n${body}`);

/**
 * The client, counting the pipelines it builds (each one is a round trip), the scripts it sends
 * and, of those, how many were sent with their source.
 */
function counting(client: Redis): {
  client: Redis;
  pipelines: () => number;
  scripts: () => number;
  sources: () => number;
} {
  let pipelines = 0;
  let scripts = 0;
  let sources = 0;
  const counted = new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'pipeline') pipelines++;
        if (property === 'evalsha' || property === 'eval') scripts++;
        if (property === 'eval') sources++;
        return value.apply(target, args);
      };
    },
  });
  return { client: counted, pipelines: () => pipelines, scripts: () => scripts, sources: () => sources };
}

describe('LuaScript', () => {
  it('runs a script Redis has not cached (NOSCRIPT) by sending its source, then by its SHA', async () => {
    const key = `${uniquePrefix('lua')}:n`;
    const script = unseen(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);
    expect(await script.run(redis, [key], [2])).toBe(2);
    expect(await script.run(redis, [key], [3])).toBe(5);
  });

  it('sends its source once for a burst of first calls, the others waiting for it rather than each meeting NOSCRIPT', async () => {
    const key = `${uniquePrefix('lua')}:n`;
    const script = unseen(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const { client, scripts, sources } = counting(redis);

    const burst = await Promise.all(Array.from({ length: 50 }, () => script.run(client, [key], [1])));
    expect([...burst].sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    expect(sources()).toBe(1);
    expect(scripts()).toBe(51);
  });

  it('sends its source again once Redis has lost it (a restart emptied the script cache), and the next burst by its SHA alone', async () => {
    const key = `${uniquePrefix('lua')}:n`;
    const script = unseen(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const { client, sources } = counting(redis);
    expect(await script.run(client, [key], [1])).toBe(1);
    await redis.script('FLUSH');

    await Promise.all(Array.from({ length: 10 }, () => script.run(client, [key], [1])));
    expect(await redis.get(key)).toBe('11');
    const sent = sources();
    expect(sent).toBeGreaterThan(1);
    await Promise.all(Array.from({ length: 10 }, () => script.run(client, [key], [1])));
    expect(await redis.get(key)).toBe('21');
    expect(sources()).toBe(sent);
  });

  it('runs by its SHA alone, the source never sent, once loadScripts has had Redis cache every script', async () => {
    const key = `${uniquePrefix('lua')}:lock`;
    const script = unseen(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const { client, sources } = counting(redis);
    await redis.script('FLUSH');

    await loadScripts(client);
    expect(await script.run(client, [`${key}:n`], [1])).toBe(1);
    expect(await RENEW_IF_OWNER.run(client, [key], ['run-1', 60_000])).toBe(0);
    expect(sources()).toBe(0);
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
