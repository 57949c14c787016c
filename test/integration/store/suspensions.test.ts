import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisKeys } from '../../../src/store/keys.js';
import { createRedis } from '../../../src/store/redis.js';
import { Suspensions } from '../../../src/store/suspensions.js';
import { FakeClock } from '../../helpers/clock.js';
import { type TestRedis, uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let server: TestRedis;
let redis: Redis;
useTestRedisClient((client) => ({ server, redis } = client));

function setup() {
  const prefix = uniquePrefix('suspend');
  const clock = new FakeClock('2026-11-27T09:00:00Z');
  return { prefix, clock, suspensions: new Suspensions(redis, { prefix, clock }) };
}

describe('Suspensions', () => {
  it('suspends a job once: true the first time, false when nothing changes', async () => {
    const { suspensions } = setup();
    expect(await suspensions.suspend('nightly', { reason: 'maintenance', by: 'ana' })).toBe(true);
    expect(await suspensions.suspend('nightly', { reason: 'maintenance', by: 'ana' })).toBe(false);
    expect(await suspensions.suspend('nightly')).toBe(false);
    const suspension = await suspensions.get('nightly');
    expect(suspension).toEqual({
      job: 'nightly',
      since: '2026-11-27T09:00:00.000Z',
      reason: 'maintenance',
      by: 'ana',
    });
  });

  it('updates the reason and author of a suspension but keeps when it began', async () => {
    const { suspensions, clock } = setup();
    await suspensions.suspend('nightly', { reason: 'maintenance' });
    await clock.advance(60_000);
    expect(await suspensions.suspend('nightly', { reason: 'incident 42', by: 'bo' })).toBe(true);
    expect(await suspensions.get('nightly')).toEqual({
      job: 'nightly',
      since: '2026-11-27T09:00:00.000Z',
      reason: 'incident 42',
      by: 'bo',
    });
  });

  it('unsuspends: true if the job was suspended, false if it was not', async () => {
    const { suspensions } = setup();
    await suspensions.suspend('nightly');
    expect(await suspensions.unsuspend('nightly')).toBe(true);
    expect(await suspensions.unsuspend('nightly')).toBe(false);
    expect(await suspensions.get('nightly')).toBeUndefined();
  });

  it('lists every suspended job, and only those', async () => {
    const { suspensions } = setup();
    expect(await suspensions.all()).toEqual(new Map());
    await suspensions.suspend('a', { by: 'ana' });
    await suspensions.suspend('b');
    await suspensions.suspend('c');
    await suspensions.unsuspend('c');
    const all = await suspensions.all();
    expect([...all.keys()].sort()).toEqual(['a', 'b']);
    expect(all.get('a')).toMatchObject({ job: 'a', by: 'ana' });
  });

  it('is shared between processes, and concurrent identical suspends report exactly one change', async () => {
    const { prefix } = setup();
    const other = createRedis({ url: server.url, role: 'test' });
    try {
      const [mine, theirs] = [new Suspensions(redis, { prefix }), new Suspensions(other, { prefix })];
      const changed = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? mine : theirs).suspend('nightly', { reason: 'deploy' }),
        ),
      );
      expect(changed.filter(Boolean)).toHaveLength(1);
      expect(await theirs.get('nightly')).toMatchObject({ reason: 'deploy' });
    } finally {
      await other.quit();
    }
  });

  it('keeps a job with an unreadable record suspended (failing safe), and a new suspend repairs it', async () => {
    const { prefix, suspensions } = setup();
    await redis.hset(redisKeys(prefix).suspended, 'nightly', 'not json');
    expect(await suspensions.get('nightly')).toEqual({
      job: 'nightly',
      since: new Date(0).toISOString(),
      reason: 'unreadable suspension record',
    });
    expect((await suspensions.all()).has('nightly')).toBe(true);
    expect(await suspensions.suspend('nightly', { reason: 'fixed' })).toBe(true);
    expect(await suspensions.get('nightly')).toMatchObject({ reason: 'fixed' });
    expect(Date.parse((await suspensions.get('nightly'))?.since ?? '')).toBeGreaterThan(0);
  });

  it('a suspension with an end is in force until it and gone from it: get and all leave it out, unsuspend finds nothing', async () => {
    const { suspensions, clock } = setup();
    const until = '2026-11-27T11:00:00.000Z';
    expect(await suspensions.suspend('nightly', { reason: 'demo', until })).toBe(true);
    expect(await suspensions.get('nightly')).toMatchObject({ until, reason: 'demo' });
    await clock.advance(2 * 3_600_000 - 1);
    expect((await suspensions.all()).has('nightly')).toBe(true);
    await clock.advance(1);
    expect(await suspensions.get('nightly')).toBeUndefined();
    expect((await suspensions.all()).has('nightly')).toBe(false);
    expect(await suspensions.unsuspend('nightly')).toBe(false);
  });

  it('suspending again after an end has passed starts a new suspension; without an end it is open-ended again', async () => {
    const { suspensions, clock } = setup();
    await suspensions.suspend('nightly', { until: '2026-11-27T09:30:00.000Z' });
    await clock.advance(3_600_000);
    expect(await suspensions.suspend('nightly', { reason: 'again', until: '2026-11-27T12:00:00.000Z' })).toBe(
      true,
    );
    expect(await suspensions.get('nightly')).toEqual({
      job: 'nightly',
      since: '2026-11-27T10:00:00.000Z',
      reason: 'again',
      until: '2026-11-27T12:00:00.000Z',
    });
    expect(await suspensions.suspend('nightly', { until: null })).toBe(true);
    expect((await suspensions.get('nightly'))?.until).toBeUndefined();
    expect(await suspensions.suspend('nightly', { until: null })).toBe(false);
  });
});
