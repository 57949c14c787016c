import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRunQueue,
  enqueueRuns,
  queuePrefix,
  type RunJobData,
  runsUnderWay,
} from '../../../src/queue/index.js';
import { RUN_QUEUE } from '../../../src/queue/run-queue.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((entry) => entry.close()));
});

const run = (runId: string, job: string): RunJobData => ({
  runId,
  job,
  policySha: 'a'.repeat(64),
  trigger: 'manual',
  dryRun: false,
});

describe('the runs under way, as the console lists them from the queue', () => {
  it('lists each run once, running before queued, and neither the parts of a split run nor an approval waiting to expire', async () => {
    const prefix = uniquePrefix('under-way');
    const queue = createRunQueue({ connection: redis, prefix });
    closing.push(queue);
    await enqueueRuns(queue, [run('pause@1', 'nightly-pause'), run('drill@1', 'weekly-drill')]);
    await queue.add('nightly-pause', {
      ...run('pause@1', 'nightly-pause'),
      part: { index: 1, keys: ['wg/ws'] },
    });
    await queue.add(
      'weekly-drill',
      { ...run('drill@0', 'weekly-drill'), approval: { round: 1, step: 'expire' } },
      { delay: 3_600_000 },
    );
    await queue.add(
      'nightly-pause',
      { ...run('pause@2', 'nightly-pause'), overlapWaits: 1 },
      { jobId: 'pause@2', delay: 60_000 },
    );
    // a worker takes the oldest: the pause
    const worker = new Worker(RUN_QUEUE, null, {
      connection: redis,
      prefix: queuePrefix(redis, prefix),
      autorun: false,
    });
    closing.push(worker);
    expect((await worker.getNextJob('test-token'))?.data.runId).toBe('pause@1');

    expect(await runsUnderWay(queue, 50)).toEqual([
      { runId: 'pause@1', job: 'nightly-pause', state: 'running' },
      { runId: 'drill@1', job: 'weekly-drill', state: 'queued' },
      { runId: 'pause@2', job: 'nightly-pause', state: 'queued' },
    ]);
    expect(await runsUnderWay(queue, 1)).toEqual([
      { runId: 'pause@1', job: 'nightly-pause', state: 'running' },
      { runId: 'drill@1', job: 'weekly-drill', state: 'queued' },
    ]);
  });
});
