import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Hold, Ownership } from '../../../src/engine/index.js';
import { Holds } from '../../../src/store/holds.js';
import { redisKeys } from '../../../src/store/keys.js';
import { RedisOwnershipLedger } from '../../../src/store/ledger.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

const T0 = Date.parse('2026-11-20T19:30:00Z');
const at = (hours: number) => new Date(T0 + hours * 3_600_000);

function record(key: string, overrides: Partial<Ownership> = {}): Ownership {
  const [workgroupId = '', workspaceId = ''] = key.split('/');
  return {
    key,
    workgroupId,
    workspaceId,
    workgroupName: `name-${workgroupId}`,
    workspaceName: `name-${workspaceId}`,
    owner: 'evening-pause',
    ownerKind: 'job',
    runId: 'evening-pause@run-1',
    state: 'confirmed',
    intendedAt: at(0).toISOString(),
    pausedAt: at(0).toISOString(),
    typeName: 'TG-8',
    pricePerHour: 1.2,
    currency: 'EUR',
    ...overrides,
  };
}

describe('RedisOwnershipLedger', () => {
  const setup = () => new RedisOwnershipLedger(redis, { prefix: uniquePrefix('ledger') });

  it('keeps one record per workspace, the last written winning', async () => {
    const ledger = setup();
    await ledger.put(record('wg/a', { state: 'intent', pausedAt: undefined }));
    await ledger.put(record('wg/a'));
    await ledger.put(record('wg/b'));
    const all = await ledger.all();
    expect([...all.keys()].sort()).toEqual(['wg/a', 'wg/b']);
    expect(all.get('wg/a')?.state).toBe('confirmed');
  });

  it('ending a confirmed pause books its paused interval and adds its hours and cost to the totals', async () => {
    const ledger = setup();
    await ledger.put(record('wg/a'));
    const ended = await ledger.end('wg/a', 'resumed', at(12));
    expect(ended?.key).toBe('wg/a');
    expect((await ledger.all()).size).toBe(0);
    expect(await ledger.intervalsSince(at(-1))).toEqual([
      expect.objectContaining({
        key: 'wg/a',
        from: at(0).toISOString(),
        to: at(12).toISOString(),
        endedBy: 'resumed',
      }),
    ]);
    const totals = await ledger.closedTotals();
    expect(totals.hours).toBeCloseTo(12, 6);
    expect(totals.cost.EUR).toBeCloseTo(14.4, 6);
  });

  it('ending an intent books no paused time: the pause never happened', async () => {
    const ledger = setup();
    await ledger.put(record('wg/a', { state: 'intent', pausedAt: undefined }));
    await ledger.end('wg/a', 'not-paused', at(1));
    expect(await ledger.intervalsSince(at(-1))).toEqual([]);
    expect((await ledger.closedTotals()).hours).toBe(0);
  });

  it('with a run id, ends only that run’s record: another run’s pause of the workspace stays owned', async () => {
    const ledger = setup();
    await ledger.put(record('wg/a', { runId: 'evening-pause@run-2' }));
    expect(await ledger.end('wg/a', 'not-paused', at(1), { runId: 'evening-pause@run-1' })).toBeUndefined();
    expect((await ledger.all()).has('wg/a')).toBe(true);
  });

  it('an unreadable record is not owned: it is left out, never resumed by mistake', async () => {
    const ledger = setup();
    const prefix = uniquePrefix('ledger-bad');
    const bad = new RedisOwnershipLedger(redis, { prefix });
    await redis.hset(redisKeys(prefix).owned, 'wg/x', '{not json');
    await bad.put(record('wg/a'));
    expect([...(await bad.all()).keys()]).toEqual(['wg/a']);
    expect((await ledger.all()).size).toBe(0);
  });

  it('lists intervals by when they ended, and drops those older than its retention', async () => {
    const ledger = new RedisOwnershipLedger(redis, {
      prefix: uniquePrefix('ledger-old'),
      intervalRetentionMs: 48 * 3_600_000,
    });
    await ledger.put(record('wg/a'));
    await ledger.end('wg/a', 'resumed', at(1));
    await ledger.put(record('wg/b', { pausedAt: at(100).toISOString() }));
    await ledger.end('wg/b', 'seen-active', at(101));
    expect((await ledger.intervalsSince(at(-1))).map((i) => i.key)).toEqual(['wg/b']);
  });
});

describe('Holds', () => {
  const hold = (pattern: string, overrides: Partial<Hold> = {}): Hold => ({
    pattern,
    state: 'active',
    until: new Date(Date.now() + 3_600_000).toISOString(),
    reason: 'customer demo',
    by: 'ana@laptop',
    createdAt: new Date().toISOString(),
    ...overrides,
  });

  it('keeps the holds in force, and logs each one placed and released with who and why', async () => {
    const holds = new Holds(redis, { prefix: uniquePrefix('holds') });
    // placed a second apart: the holds in force come oldest first, whatever the clock does meanwhile
    const placed = Date.now();
    await holds.place(hold('dev-a/kg', { createdAt: new Date(placed - 1_000).toISOString() }));
    await holds.place(
      hold('dev-*/*', {
        state: 'stopped',
        reason: 'budget freeze',
        createdAt: new Date(placed).toISOString(),
      }),
    );
    expect((await holds.active(new Date())).map((h) => h.pattern)).toEqual(['dev-a/kg', 'dev-*/*']);
    expect((await holds.release('dev-a/kg', 'bo@desk', new Date()))?.reason).toBe('customer demo');
    expect(await holds.release('dev-a/kg', 'bo@desk', new Date())).toBeUndefined();
    const log = await holds.log();
    expect(log.map((e) => [e.event, e.hold.pattern, e.by])).toEqual([
      ['released', 'dev-a/kg', 'bo@desk'],
      ['held', 'dev-*/*', undefined],
      ['held', 'dev-a/kg', undefined],
    ]);
  });

  it('a hold past its time has no effect, is removed at the next read, and is logged as expired once', async () => {
    const holds = new Holds(redis, { prefix: uniquePrefix('holds-expiry') });
    const until = new Date(Date.now() + 60_000);
    await holds.place(hold('dev-a/kg', { until: until.toISOString() }));
    expect(await holds.active(new Date(until.getTime() - 1))).toHaveLength(1);
    expect(await holds.active(until)).toEqual([]);
    expect(await holds.active(until)).toEqual([]);
    expect((await holds.log()).map((e) => e.event)).toEqual(['expired', 'held']);
  });

  it('a read-only read (a plan, drift, a scrape) leaves an expired hold for the next read to remove', async () => {
    const holds = new Holds(redis, { prefix: uniquePrefix('holds-read-only') });
    const until = new Date(Date.now() + 60_000);
    await holds.place(hold('dev-a/kg', { until: until.toISOString() }));
    expect(await holds.active(until, { readOnly: true })).toEqual([]);
    expect((await holds.log()).map((e) => e.event)).toEqual(['held']);
    await holds.active(until);
    expect((await holds.log()).map((e) => e.event)).toEqual(['expired', 'held']);
  });
});
