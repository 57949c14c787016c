import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRunQueue, enqueueRuns } from '../../../src/queue/run-queue.js';
import { DEFAULT_API_KEY, seedState, startSimulator } from '../../../src/sim/index.js';
import { RunHistory } from '../../../src/store/history.js';
import { redisKeys } from '../../../src/store/keys.js';
import { type LocalRedis, startLocalRedis } from '../../../src/store/local-server.js';
import { PolicyStore } from '../../../src/store/policy-store.js';
import { createRedis } from '../../../src/store/redis.js';
import { assertBuilt, type CliProcess, eventually, harnessKeyring } from '../../helpers/engine.js';
import { uniquePrefix } from '../../helpers/redis.js';
import { killGroup, logLines, signalGroup, startService } from './service-group.js';

// a tick every second: whenever Redis goes away, a batch of ticks is on its way to it
const POLICY = `version: 1
jobs:
  every-second:
    schedule: "* * * * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

/** What an operator counts on: gone this long after SIGTERM, whatever Redis does. */
const LIMIT_MS = 15_000;

let dir: string;
let redis: LocalRedis | undefined;
const services: CliProcess[] = [];

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-shutdown-'));
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
});
afterEach(async () => {
  for (const service of services.splice(0)) killGroup(service);
  await redis?.stop();
  redis = undefined;
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function env(url: string, prefix: string): Record<string, string> {
  return {
    REDIS_URL: url,
    NIGHTSHIFT_REDIS_PREFIX: prefix,
    // nothing listens there: runs a worker takes fail over and over, and stay in flight
    NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
    NIGHTSHIFT_API_KEY: 'k',
    NIGHTSHIFT_LOG_FORMAT: 'json',
  };
}

/** The run ids in the queue and the job's last handled tick, read with a client of the test's own. */
async function recorded(url: string, prefix: string): Promise<{ runs: string[]; lastTick: number }> {
  const client = createRedis({ url, role: 'test' });
  const queue = createRunQueue({ connection: client, prefix });
  try {
    const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
    const lastTick = Number(await client.get(redisKeys(prefix).lastTick('every-second')));
    return { runs: jobs.map((job) => job.id as string).sort(), lastTick };
  } finally {
    await queue.close();
    client.disconnect();
  }
}

describe('a service told to stop after Redis is gone', () => {
  it.each([
    ['scheduler', (file: string) => ['scheduler', file]],
    ['start', (file: string) => ['start', file]],
  ])(
    '%s exits 0 within 15 s of SIGTERM, and what it recorded is still there for the next scheduler',
    async (_, args) => {
      redis = await startLocalRedis();
      const prefix = uniquePrefix('shutdown');
      const file = join(dir, 'policy.yaml');
      const service = startService(args(file), env(redis.url, prefix));
      services.push(service);
      await eventually(
        'ticks handed over',
        () => logLines(service).some((l) => l.msg === 'ticks handled'),
        15_000,
      );
      const before = await recorded(redis.url, prefix);
      expect(before.runs.length).toBeGreaterThan(0);

      await redis.halt();
      await eventually('the outage noticed', () => service.output().includes('Redis unreachable'), 10_000);
      // two ticks come due while Redis is gone: a batch of them now waits for it
      await sleep(2_500);
      const { exit, ms } = await signalGroup(service, 'SIGTERM', LIMIT_MS);
      expect(exit, service.output()).toBe(0);
      expect(ms).toBeLessThan(LIMIT_MS);
      expect(service.output()).not.toMatch(/\n\s+at /);
      expect(logLines(service).map((line) => line.msg)).toContain(
        'scheduler stopped with ticks still waiting for Redis; the next catch-up accounts for them',
      );

      // Redis back: the runs handed over before the outage are there, and the ticks the stopped
      // service could not hand over are accounted for by the next scheduler's catch-up
      await redis.restart();
      const after = await recorded(redis.url, prefix);
      expect(after.runs).toEqual(expect.arrayContaining(before.runs));
      expect(after.lastTick).toBeGreaterThanOrEqual(before.lastTick);
      const next = startService(['scheduler', file], env(redis.url, prefix));
      services.push(next);
      await eventually(
        'the catch-up',
        () => logLines(next).some((line) => line.msg === 'ticks missed while no scheduler ran'),
        15_000,
      );
      const client = createRedis({ url: redis.url, role: 'test' });
      try {
        const [missed] = await new RunHistory(client, { prefix }).list({
          job: 'every-second',
          outcome: 'missed',
        });
        expect(Date.parse(missed?.scheduledAt ?? '')).toBeGreaterThan(before.lastTick);
      } finally {
        client.disconnect();
      }
      expect((await signalGroup(next, 'SIGTERM', LIMIT_MS)).exit).toBe(0);
    },
    60_000,
  );
});

describe('a worker told to stop while the API hangs under its run', () => {
  // a pause call: the run stays in flight on its first target; the listing: on the request the
  // worker's runs share, which no run's own signal ends
  it.each(['pauseWorkspace', 'listWorkgroups'] as const)(
    'exits 0 within 15 s of SIGTERM with the default grace, and hands the run back for another worker (%s hanging)',
    async (hanging) => {
      redis = await startLocalRedis();
      const prefix = uniquePrefix('shutdown-api');
      const sim = await startSimulator({
        port: 0,
        state: seedState({ seed: 3, fleet: { workgroups: 1, workspacesPerWorkgroup: 2 } }),
        faults: { hangRate: 1, operations: [hanging] },
      });
      try {
        const client = createRedis({ url: redis.url, role: 'test' });
        const queue = createRunQueue({ connection: client, prefix });
        const text = POLICY.replace('* * * * * *', '0 20 * * *');
        const policySha = await new PolicyStore(client, { prefix, keyring: harnessKeyring() }).put(text);
        await enqueueRuns(queue, [
          {
            runId: 'every-second@manual-1',
            job: 'every-second',
            policySha,
            trigger: 'manual',
            dryRun: false,
          },
        ]);
        const worker = startService(['worker'], {
          ...env(redis.url, prefix),
          NIGHTSHIFT_API_URL: sim.url,
          NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
        });
        services.push(worker);
        await eventually(
          'the run in flight',
          async () => (await queue.getJob('every-second@manual-1'))?.processedOn,
          15_000,
        );
        await eventually(
          `a ${hanging} call hanging`,
          () => sim.requests().some((r) => r.operation === hanging),
          15_000,
        );
        const { exit, ms } = await signalGroup(worker, 'SIGTERM', LIMIT_MS);
        expect(exit, worker.output()).toBe(0);
        expect(ms).toBeLessThan(LIMIT_MS);
        expect(logLines(worker).map((line) => line.msg)).toContain(
          'run handed back to the queue at shutdown',
        );
        expect(await (await queue.getJob('every-second@manual-1'))?.getState()).toBe('waiting');
        await queue.close();
        client.disconnect();
      } finally {
        await sim.close();
      }
    },
    60_000,
  );
});
