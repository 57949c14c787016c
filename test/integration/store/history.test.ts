import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/summary.js';
import { type RetentionOptions, RunHistory } from '../../../src/store/history.js';
import { redisKeys } from '../../../src/store/keys.js';
import { createRedis } from '../../../src/store/redis.js';
import { type TestRedis, uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let server: TestRedis;
let redis: Redis;
useTestRedisClient((client) => ({ server, redis } = client));

const BASE = Date.parse('2030-01-01T00:00:00Z');
const at = (offsetMs: number) => new Date(BASE + offsetMs).toISOString();

function summary(job: string, runId: string, overrides: Partial<RunSummary> = {}): RunSummary {
  return {
    runId,
    job,
    action: 'pause-idle',
    trigger: 'schedule',
    dryRun: false,
    scheduledAt: at(0),
    startedAt: at(0),
    finishedAt: at(0),
    outcome: 'succeeded',
    counts: { total: 0, succeeded: 0, skipped: 0, failed: 0, planned: 0 },
    targets: [],
    findings: [],
    requestIds: [],
    ...overrides,
  };
}

/** Every key under the prefix, by SCAN, to check what retention left behind. */
async function keysUnder(prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}}:*`, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
}

function setup(retention?: RetentionOptions) {
  const prefix = uniquePrefix('history');
  return { prefix, keys: redisKeys(prefix), history: new RunHistory(redis, { prefix, retention }) };
}

describe('RunHistory.record and get', () => {
  it('returns a recorded summary by runId, exactly as recorded', async () => {
    const { history } = setup();
    const run = summary('nightly', 'r1', { evidence: { restored: true }, deliveries: 2 });
    await history.record(run);
    expect(await history.get('r1')).toEqual(run);
    expect(await history.get('missing')).toBeUndefined();
  });

  it('replaces a run recorded twice instead of counting or listing it twice', async () => {
    const { history } = setup();
    await history.record(summary('nightly', 'r1', { outcome: 'failed', finishedAt: at(1) }));
    await history.record(summary('nightly', 'r1', { outcome: 'succeeded', finishedAt: at(2) }));
    expect(await history.count()).toBe(1);
    expect(await history.count({ job: 'nightly' })).toBe(1);
    expect((await history.list()).map((run) => [run.runId, run.outcome])).toEqual([['r1', 'succeeded']]);
  });

  it('gives each summary, and the indexes, a TTL of maxAgeMs so an abandoned job leaves nothing behind', async () => {
    const { history, keys } = setup({ maxAgeMs: 60_000 });
    await history.record(summary('nightly', 'r1', { finishedAt: new Date().toISOString() }));
    for (const key of [keys.run('r1'), keys.history, keys.jobHistory('nightly'), keys.lastRuns]) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    }
  });

  it('rejects retention limits that are not positive integers', () => {
    expect(() => new RunHistory(redis, { retention: { maxRunsPerJob: 0 } })).toThrow(/maxRunsPerJob/);
    expect(() => new RunHistory(redis, { retention: { maxAgeMs: 1.5 } })).toThrow(/maxAgeMs/);
  });
});

describe('RunHistory.list and count', () => {
  it('lists newest first by finishedAt, else startedAt, else scheduledAt', async () => {
    const { history } = setup();
    await history.record(summary('a', 'finished-3', { finishedAt: at(3_000) }));
    await history.record(summary('a', 'started-2', { finishedAt: undefined, startedAt: at(2_000) }));
    await history.record(
      summary('b', 'scheduled-4', { finishedAt: undefined, startedAt: undefined, scheduledAt: at(4_000) }),
    );
    await history.record(summary('b', 'finished-1', { finishedAt: at(1_000) }));
    expect((await history.list()).map((run) => run.runId)).toEqual([
      'scheduled-4',
      'finished-3',
      'started-2',
      'finished-1',
    ]);
  });

  it('filters by job and by outcome, and stops at the limit', async () => {
    const { history } = setup();
    for (let i = 0; i < 120; i++) {
      await history.record(
        summary(i % 2 ? 'odd' : 'even', `r${i}`, {
          finishedAt: at(i),
          outcome: i % 3 === 0 ? 'failed' : 'succeeded',
        }),
      );
    }
    expect((await history.list({ limit: 3 })).map((run) => run.runId)).toEqual(['r119', 'r118', 'r117']);
    expect((await history.list({ job: 'odd', limit: 2 })).map((run) => run.runId)).toEqual(['r119', 'r117']);
    // Failed runs are every third, so filling the limit takes more than one page of the index.
    const failed = await history.list({ job: 'even', outcome: 'failed', limit: 20 });
    expect(failed.map((run) => run.runId)).toEqual(Array.from({ length: 20 }, (_, k) => `r${114 - 6 * k}`));
    expect(await history.count()).toBe(120);
    expect(await history.count({ job: 'odd' })).toBe(60);
    expect(await history.count({ job: 'nobody' })).toBe(0);
  });

  it('skips a summary that expired before retention trimmed it, and removes it from both indexes', async () => {
    const { history, keys } = setup();
    await history.record(summary('nightly', 'kept', { finishedAt: at(1) }));
    await history.record(summary('nightly', 'expired', { finishedAt: at(2) }));
    await redis.del(keys.run('expired'));
    expect((await history.list()).map((run) => run.runId)).toEqual(['kept']);
    expect(await history.count()).toBe(1);
    expect(await history.count({ job: 'nightly' })).toBe(1);
  });

  it('skips a summary it cannot parse instead of failing the whole listing', async () => {
    const { history, keys } = setup();
    await history.record(summary('nightly', 'good', { finishedAt: at(1) }));
    await history.record(summary('nightly', 'bad', { finishedAt: at(2) }));
    await redis.set(keys.run('bad'), '{"runId":"bad","outcome":"exploded"}');
    expect((await history.list()).map((run) => run.runId)).toEqual(['good']);
    expect(await history.get('bad')).toBeUndefined();
  });
});

describe('RunHistory retention bounds memory', () => {
  it('keeps at most maxRunsPerJob runs of a job fed three times that many, deleting the summaries it drops', async () => {
    const { history, prefix, keys } = setup({ maxRunsPerJob: 5 });
    for (let i = 0; i < 15; i++) await history.record(summary('busy', `busy-${i}`, { finishedAt: at(i) }));
    await history.record(summary('quiet', 'quiet-0', { finishedAt: at(0) }));
    expect(await history.count({ job: 'busy' })).toBe(5);
    expect(await history.count()).toBe(6);
    expect((await history.list({ job: 'busy' })).map((run) => run.runId)).toEqual([
      'busy-14',
      'busy-13',
      'busy-12',
      'busy-11',
      'busy-10',
    ]);
    const runKeys = (await keysUnder(prefix)).filter((key) => key.startsWith(keys.run('')));
    expect(runKeys).toHaveLength(6);
  });

  it('keeps at most maxRunsTotal runs across jobs fed three times that many, cleaning every job it trims', async () => {
    const { history, prefix, keys } = setup({ maxRunsPerJob: 100, maxRunsTotal: 12 });
    const jobs = ['a', 'b', 'c', 'd'];
    for (let i = 0; i < 9; i++) {
      for (const [j, job] of jobs.entries()) {
        await history.record(summary(job, `${job}-${i}`, { finishedAt: at(i * 10 + j) }));
      }
    }
    expect(await history.count()).toBe(12);
    const perJob = await Promise.all(jobs.map((job) => history.count({ job })));
    expect(perJob).toEqual([3, 3, 3, 3]);
    expect(await keysUnder(prefix)).toEqual(
      [
        keys.history,
        keys.lastRuns,
        ...jobs.map((job) => keys.jobHistory(job)),
        ...jobs.flatMap((job) => [6, 7, 8].map((i) => keys.run(`${job}-${i}`))),
      ].sort(),
    );
  });

  it('drops runs older than maxAgeMs, from every job, when any run is recorded', async () => {
    const { history, prefix, keys } = setup({ maxAgeMs: 60_000 });
    const now = Date.now();
    const old = new Date(now - 120_000).toISOString();
    for (let i = 0; i < 3; i++) await history.record(summary(`job-${i}`, `old-${i}`, { finishedAt: old }));
    expect(await history.count()).toBe(0);
    await redis.zadd(keys.history, now - 120_000, JSON.stringify(['job-0', 'planted']));
    await redis.set(keys.run('planted'), '{}');
    await history.record(summary('job-1', 'fresh', { finishedAt: new Date(now).toISOString() }));
    expect((await history.list()).map((run) => run.runId)).toEqual(['fresh']);
    expect(await keysUnder(prefix)).toEqual(
      [keys.history, keys.lastRuns, keys.jobHistory('job-1'), keys.run('fresh')].sort(),
    );
  });

  it('stays within its limits when two processes record concurrently', async () => {
    const prefix = uniquePrefix('history');
    const other = createRedis({ url: server.url, role: 'test' });
    try {
      const retention = { maxRunsPerJob: 8, maxRunsTotal: 10 };
      const writers = [
        new RunHistory(redis, { prefix, retention }),
        new RunHistory(other, { prefix, retention }),
      ];
      await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          writers[i % 2]?.record(summary(`job-${i % 3}`, `r${i}`, { finishedAt: at(i) })),
        ),
      );
      const reader = writers[0];
      expect(await reader?.count()).toBe(10);
      // the summaries, the three jobs' indexes, the index of all and the last runs
      expect(await keysUnder(prefix)).toHaveLength(10 + 3 + 1 + 1);
    } finally {
      await other.quit();
    }
  });
});
