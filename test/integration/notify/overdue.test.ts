import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import {
  InMemoryNotificationMemory,
  Notifier,
  type OverduePayload,
  OverdueWatch,
} from '../../../src/notify/index.js';
import { createActionCatalog, parsePolicy } from '../../../src/policy/index.js';
import { OverdueEpisodes, RunHistory } from '../../../src/store/index.js';
import { createRedis } from '../../../src/store/redis.js';
import { startTestRedis, type TestRedis, uniquePrefix } from '../../helpers/redis.js';
import { runSummary } from '../../helpers/summaries.js';

/**
 * The dead-man's switch with two schedulers on one Redis: each checks every job, and the sinks
 * hear of an overdue job once, and of its end once.
 */

let redisServer: TestRedis;
let redis: Redis;
let receiver: ScriptedServer;
const notifiers: Notifier[] = [];

beforeAll(async () => {
  [redisServer, receiver] = await Promise.all([startTestRedis(), startScriptedServer()]);
  redis = createRedis({ url: redisServer.url, role: 'test' });
  receiver.replyJson(200, { ok: true });
});

afterEach(async () => {
  await Promise.all(notifiers.splice(0).map((notifier) => notifier.close()));
  receiver.requests.length = 0;
});

afterAll(async () => {
  await receiver.close();
  await redis.quit();
  await redisServer.stop();
});

const registry = createActionCatalog([
  { name: 'audit', description: 'Test only.', destructive: false, scope: 'none', params: z.strictObject({}) },
]);

const DAY_MS = 86_400_000;

/** Two schedulers' watches over one policy, history and episode store. */
function replicas(prefix: string) {
  const policy = parsePolicy(
    `version: 1
notifications:
  ops: { url: "${receiver.url}/ops" }
  quiet: { url: "${receiver.url}/quiet", on: [failure] }
jobs:
  backup: { schedule: "0 6 * * *", action: audit, notify: [ops, quiet] }
`,
    'policy.yaml',
    { registry, env: {} },
  );
  const history = new RunHistory(redis, { prefix });
  const watches = [0, 1].map(() => {
    const notifier = new Notifier({
      memory: new InMemoryNotificationMemory(),
      consoleUrl: 'https://ops.example.com',
    });
    notifiers.push(notifier);
    return new OverdueWatch({
      policy: () => policy,
      lastRuns: () => history.lastRuns(),
      suspended: async () => new Set(),
      episodes: new OverdueEpisodes(redis, { prefix }),
      notifier,
    });
  });
  const checkAll = async () => (await Promise.all(watches.map((watch) => watch.check()))).flat();
  return { history, checkAll };
}

/** A run of `backup` that finished `ago` ms before now. */
function backupRun(outcome: 'succeeded' | 'failed', ago: number) {
  const summary = runSummary({ job: 'backup', ...(outcome === 'failed' ? { failed: 1, succeeded: 0 } : {}) });
  return { ...summary, finishedAt: new Date(Date.now() - ago).toISOString() };
}

const bodies = () => receiver.requests.map((request) => JSON.parse(request.body) as OverduePayload);

describe('overdue across two schedulers', () => {
  it('tells the sinks that listen to overdue once per episode, and once when a success ends it', async () => {
    const { history, checkAll } = replicas(uniquePrefix('overdue'));
    await history.record(backupRun('succeeded', 3 * DAY_MS));
    await history.record(backupRun('failed', DAY_MS));

    expect(await checkAll()).toHaveLength(1);
    expect(receiver.requests.map((request) => request.url)).toEqual(['/ops']);
    expect(bodies()[0]).toMatchObject({
      kind: 'nightshift.overdue',
      event: 'overdue',
      job: 'backup',
      reason: 'late',
      link: 'https://ops.example.com/runs?job=backup',
    });
    // the episode stays open and told: no second notice while it lasts
    expect(await checkAll()).toEqual([]);

    await history.record(backupRun('succeeded', 1_000));
    const cleared = await checkAll();
    expect(cleared.map((notice) => notice.event)).toEqual(['cleared']);
    expect(bodies().map((body) => body.event)).toEqual(['overdue', 'cleared']);
    expect(await checkAll()).toEqual([]);
    expect(receiver.requests).toHaveLength(2);
  });
});
