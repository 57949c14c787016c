import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type CheckpointStore,
  MemoryCheckpointStore,
  progressRecord,
} from '../../../src/engine/checkpoint.js';
import type { TargetRecord } from '../../../src/engine/summary.js';
import { createLogger, silentLogger } from '../../../src/log/logger.js';
import { RedisCheckpointStore } from '../../../src/store/checkpoint.js';
import { redisKeys } from '../../../src/store/keys.js';
import { type TestRedis, uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let server: TestRedis;
let redis: Redis;
useTestRedisClient((client) => ({ server, redis } = client));

function record(key: string, overrides: Partial<TargetRecord> = {}): TargetRecord {
  return {
    key,
    workgroupId: key.split('/')[0],
    workspaceId: key.split('/')[1],
    outcome: 'succeeded',
    attempts: 1,
    requestIds: ['req-1'],
    durationMs: 12,
    detail: { readyAfterMs: 900 },
    ...overrides,
  };
}

// The Redis store must behave as the in-memory one the executor's unit tests use.
describe.each([
  ['MemoryCheckpointStore', () => new MemoryCheckpointStore()],
  ['RedisCheckpointStore', () => new RedisCheckpointStore(redis, { prefix: uniquePrefix('checkpoint') })],
] as const)('%s contract', (_name, make: () => CheckpointStore) => {
  it('loads the records of the given targets alone, and counts the run’s records', async () => {
    const store = make();
    await store.save('run-1', record('wg1/ws1'));
    await store.save('run-1', record('wg1/ws2'));
    await store.save('run-1', record('wg1/ws3'));
    expect(await store.load('run-1', ['wg1/ws3', 'wg1/ws1', 'wg1/ws9'])).toEqual(
      new Map([
        ['wg1/ws3', record('wg1/ws3')],
        ['wg1/ws1', record('wg1/ws1')],
      ]),
    );
    expect(await store.load('run-1', [])).toEqual(new Map());
    expect(await store.count('run-1')).toBe(3);
    expect(await store.count('run-2')).toBe(0);
  });

  it('loads what was saved, by target key, the latest save of a target winning', async () => {
    const store = make();
    expect(await store.load('run-1')).toEqual(new Map());
    await store.save('run-1', record('wg1/ws1', { outcome: 'failed', attempts: 3 }));
    await store.save('run-1', record('wg1/ws2'));
    await store.save('run-1', record('wg1/ws1', { attempts: 4 }));
    await store.save('run-2', record('wg2/ws9'));
    expect(await store.load('run-1')).toEqual(
      new Map([
        ['wg1/ws1', record('wg1/ws1', { attempts: 4 })],
        ['wg1/ws2', record('wg1/ws2')],
      ]),
    );
  });

  it('forgets a run on clear, leaving other runs alone', async () => {
    const store = make();
    await store.save('run-1', record('wg1/ws1'));
    await store.save('run-2', record('wg2/ws9'));
    await store.clear('run-1');
    expect(await store.load('run-1')).toEqual(new Map());
    expect((await store.load('run-2')).size).toBe(1);
  });

  it('keeps a progress record per target of a run, the latest write winning, apart from the records', async () => {
    const store = make();
    expect(await store.loadProgress('run-1', 'wg1/ws1')).toBeUndefined();
    await store.saveProgress('run-1', 'wg1/ws1', { restoreStartedAt: 1, ids: ['a'] });
    await store.saveProgress('run-1', 'wg1/ws1', { restoreStartedAt: 2, ids: ['a', 'b'] });
    await store.saveProgress('run-1', 'wg1/ws2', { restoreStartedAt: 3, ids: [] });
    await store.saveProgress('run-2', 'wg1/ws1', { restoreStartedAt: 4, ids: [] });
    expect(await store.loadProgress('run-1', 'wg1/ws1')).toEqual({ restoreStartedAt: 2, ids: ['a', 'b'] });
    expect(await store.loadProgress('run-1', 'wg1/ws2')).toEqual({ restoreStartedAt: 3, ids: [] });
    expect(await store.load('run-1')).toEqual(new Map());
  });

  it('forgets a run’s progress records on clear, leaving other runs’ alone', async () => {
    const store = make();
    await store.saveProgress('run-1', 'wg1/ws1', { step: 1 });
    await store.saveProgress('run-2', 'wg1/ws1', { step: 2 });
    await store.clear('run-1');
    expect(await store.loadProgress('run-1', 'wg1/ws1')).toBeUndefined();
    expect(await store.loadProgress('run-2', 'wg1/ws1')).toEqual({ step: 2 });
  });
});

describe('progressRecord', () => {
  const Schema = z.object({ sentAt: z.number() });

  it('reads back what an earlier attempt wrote, through its schema', async () => {
    const store = new MemoryCheckpointStore();
    await progressRecord(store, 'run-1', 'wg1/ws1', silentLogger).write({ sentAt: 5 });
    expect(await progressRecord(store, 'run-1', 'wg1/ws1', silentLogger).read(Schema)).toEqual({ sentAt: 5 });
  });

  it('reads a record its schema does not accept as none, with a warning, so the step starts over', async () => {
    const store = new MemoryCheckpointStore();
    const lines: { msg: string; target?: string }[] = [];
    const log = createLogger({ destination: { write: (line) => lines.push(JSON.parse(line)) } });
    await store.saveProgress('run-1', 'wg1/ws1', { sentAt: 'yesterday' });
    expect(await progressRecord(store, 'run-1', 'wg1/ws1', log).read(Schema)).toBeUndefined();
    expect(lines).toMatchObject([{ msg: 'dropped an unreadable progress record', target: 'wg1/ws1' }]);
  });
});

describe('RedisCheckpointStore', () => {
  it('refreshes the TTL of a run on every save', async () => {
    const prefix = uniquePrefix('checkpoint');
    const store = new RedisCheckpointStore(redis, { prefix, ttlMs: 60_000 });
    const key = redisKeys(prefix).runTargets('run-1');
    await store.save('run-1', record('wg1/ws1'));
    await redis.pexpire(key, 1_000);
    await store.save('run-1', record('wg1/ws2'));
    expect(await redis.pttl(key)).toBeGreaterThan(55_000);
  });

  it('keeps progress records under the run’s TTL, refreshed on every write', async () => {
    const prefix = uniquePrefix('checkpoint');
    const store = new RedisCheckpointStore(redis, { prefix, ttlMs: 60_000 });
    const key = redisKeys(prefix).runProgress('run-1');
    await store.saveProgress('run-1', 'wg1/ws1', { step: 1 });
    await redis.pexpire(key, 1_000);
    await store.saveProgress('run-1', 'wg1/ws1', { step: 2 });
    expect(await redis.pttl(key)).toBeGreaterThan(55_000);
  });

  it('drops a corrupt record with a warning instead of failing the run', async () => {
    const prefix = uniquePrefix('checkpoint');
    const lines: { msg: string; target?: string }[] = [];
    const log = createLogger({ destination: { write: (line) => lines.push(JSON.parse(line)) } });
    const store = new RedisCheckpointStore(redis, { prefix, log });
    await store.save('run-1', record('wg1/ws1'));
    const key = redisKeys(prefix).runTargets('run-1');
    await redis.hset(key, 'wg1/ws2', '{truncated');
    await redis.hset(key, 'wg1/ws3', JSON.stringify({ ...record('wg1/ws3'), outcome: 'exploded' }));
    await redis.hset(key, 'wg1/ws4', JSON.stringify(record('wg9/elsewhere')));
    expect([...(await store.load('run-1')).keys()]).toEqual(['wg1/ws1']);
    expect(lines.map((line) => line.target).sort()).toEqual(['wg1/ws2', 'wg1/ws3', 'wg1/ws4']);
  });

  it('reads a record with a field this version does not know as the record without it', async () => {
    const prefix = uniquePrefix('checkpoint');
    const store = new RedisCheckpointStore(redis, { prefix });
    const key = redisKeys(prefix).runTargets('run-1');
    await redis.hset(key, 'wg1/ws1', JSON.stringify({ ...record('wg1/ws1'), laterField: 'x' }));
    const loaded = (await store.load('run-1')).get('wg1/ws1');
    expect(loaded).toEqual(record('wg1/ws1'));
    expect(loaded).not.toHaveProperty('laterField');
  });

  it('stores every record of saves made at once, in a few writes, each save resolving only once its record is stored', async () => {
    const prefix = uniquePrefix('checkpoint');
    const store = new RedisCheckpointStore(redis, { prefix });
    const key = redisKeys(prefix).runTargets('run-1');
    const calls = async () =>
      Number(/cmdstat_evalsha:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
    const before = await calls();
    const stored: number[] = [];
    await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        store.save('run-1', record(`wg1/ws${index}`)).then(async () => {
          if (await redis.hexists(key, `wg1/ws${index}`)) stored.push(index);
        }),
      ),
    );
    expect(stored).toHaveLength(200);
    expect((await store.load('run-1')).size).toBe(200);
    // the first save's write, then one for everything saved while it was under way
    expect((await calls()) - before).toBeLessThanOrEqual(3);
  });

  it('rejects every save of a write that failed, and the next save writes again', async () => {
    const prefix = uniquePrefix('checkpoint');
    const store = new RedisCheckpointStore(redis, { prefix });
    const key = redisKeys(prefix).runTargets('run-1');
    await redis.set(key, 'not a hash');
    const saves = [store.save('run-1', record('wg1/ws1')), store.save('run-1', record('wg1/ws2'))];
    for (const save of saves) await expect(save).rejects.toThrow(/WRONGTYPE/);
    await redis.del(key);
    await store.save('run-1', record('wg1/ws3'));
    expect([...(await store.load('run-1')).keys()]).toEqual(['wg1/ws3']);
  });

  it('keeps checkpoints through a Redis restart, so a redelivered run skips finished targets', async () => {
    const store = new RedisCheckpointStore(redis, { prefix: uniquePrefix('checkpoint') });
    await store.save('run-1', record('wg1/ws1'));
    await server.restart();
    expect([...(await store.load('run-1')).keys()]).toEqual(['wg1/ws1']);
  });
});
