import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { AuditTrail } from '../../../src/store/audit.js';
import { redisKeys } from '../../../src/store/keys.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => ({ redis } = client));

const change = (who: string, subject: string) =>
  ({ who, action: 'hold', subject, where: 'cli ana@laptop', why: 'keep mine up' }) as const;

describe('AuditTrail', () => {
  it('lists changes newest first, each stamped with when Redis appended it', async () => {
    const trail = new AuditTrail(redis, { prefix: uniquePrefix('audit') });
    const before = Date.now();
    await trail.append(change('ana', 'prod/*'));
    await trail.append({ ...change('bo', 'run-1'), action: 'cancel', details: { targets: 3 } });
    const entries = await trail.list();
    expect(entries.map((entry) => [entry.who, entry.action, entry.subject])).toEqual([
      ['bo', 'cancel', 'run-1'],
      ['ana', 'hold', 'prod/*'],
    ]);
    expect(entries[0]?.details).toEqual({ targets: 3 });
    expect(Date.parse(entries[1]?.at ?? '')).toBeGreaterThanOrEqual(before - 1_000);
  });

  it('returns only entries since an instant and at most the limit asked for', async () => {
    const trail = new AuditTrail(redis, { prefix: uniquePrefix('audit') });
    for (const subject of ['a', 'b', 'c']) await trail.append(change('ana', subject));
    expect((await trail.list({ limit: 2 })).map((entry) => entry.subject)).toEqual(['c', 'b']);
    expect(await trail.list({ sinceMs: Date.now() + 60_000 })).toEqual([]);
  });

  it('keeps at most maxEntries, dropping the oldest', async () => {
    const prefix = uniquePrefix('audit');
    const trail = new AuditTrail(redis, { prefix, maxEntries: 1 });
    for (let i = 0; i < 300; i += 1) await trail.append(change('ana', `p${i}`));
    // MAXLEN ~ trims whole macro nodes: far fewer than appended, never the newest
    expect(await redis.xlen(redisKeys(prefix).audit)).toBeLessThan(300);
    expect((await trail.list({ limit: 1 }))[0]?.subject).toBe('p299');
  });

  it('refuses a change without who, and skips an entry it cannot read', async () => {
    const prefix = uniquePrefix('audit');
    const trail = new AuditTrail(redis, { prefix });
    await expect(trail.append({ ...change('', 'x') })).rejects.toThrow(/who/);
    await redis.xadd(redisKeys(prefix).audit, '*', 'entry', '{not json');
    await trail.append(change('ana', 'ok'));
    expect((await trail.list()).map((entry) => entry.subject)).toEqual(['ok']);
  });
});
