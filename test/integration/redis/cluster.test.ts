import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { scheduledRunId } from '../../../src/queue/run-queue.js';
import { DEFAULT_API_KEY, type SimulatorHandle } from '../../../src/sim/index.js';
import { RunHistory } from '../../../src/store/history.js';
import { RedisRateLimiter } from '../../../src/store/rate-limiter.js';
import {
  assertBuilt,
  type CliProcess,
  Engine,
  eventually,
  type LogLine,
  pauseRequests,
  secondsCron,
  startCli,
  startFleetSim,
  startTakeoverWorker,
  workspacesNot,
} from '../../helpers/engine.js';
import { startRedisCluster, useTopology } from '../../helpers/redis-topologies.js';
import { runSummary } from '../../helpers/summaries.js';

const FLEET = { workgroups: 4, workspacesPerWorkgroup: 5 };
const TARGETS = FLEET.workgroups * FLEET.workspacesPerWorkgroup;

const cluster = useTopology(startRedisCluster);
let sim: SimulatorHandle;
let engine: Engine | undefined;
const workers: CliProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  // 150 ms per pause, two at a time: a run of the fleet takes about 1.5 s
  sim = await startFleetSim(FLEET, { faults: { latencyMs: 150, operations: ['pauseWorkspace'] } });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL')));
  await engine?.close();
  engine = undefined;
  sim.reset();
});

afterAll(async () => {
  await sim?.close();
});

function policy(cron = '0 20 * * *'): string {
  return `version: 1
jobs:
  fleet-pause:
    schedule: "${cron}"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 2
`;
}

function onCluster(label: string): Engine {
  engine = new Engine(cluster.current.connect, label);
  return engine;
}

describe('on a Redis Cluster of three masters', () => {
  it('a queued run is worked: every workspace paused once and owned, the run recorded, its checkpoints and lock released', async () => {
    const engine = onCluster('cluster-run');
    engine.worker(sim.url);
    const runId = await engine.enqueue(policy(), 'fleet-pause');

    const run = await engine.waitForRun(runId, 20_000);
    expect(run).toMatchObject({
      outcome: 'succeeded',
      counts: { total: TARGETS, succeeded: TARGETS, failed: 0 },
    });
    const calls = pauseRequests(sim);
    expect(calls.size).toBe(TARGETS);
    for (const made of calls.values()) expect(made.map((call) => call.status)).toEqual([200]);
    const owned = await engine.state.ledger.all();
    expect(owned.size).toBe(TARGETS);
    for (const record of owned.values())
      expect(record).toMatchObject({ owner: 'fleet-pause', runId, state: 'confirmed' });
    expect(await engine.history.count({ job: 'fleet-pause' })).toBe(1);
    // the run is recorded first, then its lock released: a moment later
    await eventually(
      'the run’s checkpoints and lock released',
      async () =>
        (await engine.redis.exists(engine.keys.runTargets(runId), engine.keys.runLock('fleet-pause'))) === 0,
    );
    // BullMQ's keys carry the hash tag, so its scripts find all of a queue's keys in one slot
    expect(engine.queue.opts.prefix).toBe(`{${engine.prefix}}`);
    await eventually(
      'the BullMQ job completed',
      async () => (await (await engine.queue.getJob(runId))?.getState()) === 'completed',
    );
  });

  it('a scheduler’s ticks become runs, and a tick while the previous run is going is skipped (overlap: skip)', async () => {
    const engine = onCluster('cluster-overlap');
    // ticks at +0 (a run of about 1.5 s), +1 (during it), +4 (after it, even on a busy machine)
    const { cron, ticks } = secondsCron([0, 1, 4]);
    const [first, during, after] = ticks.map((at) => scheduledRunId('fleet-pause', at)) as [
      string,
      string,
      string,
    ];
    engine.worker(sim.url);
    const scheduler = engine.scheduler();
    const text = policy(cron);
    await scheduler.load(engine.parse(text), text);
    await scheduler.start();

    await engine.waitForRun(after, 20_000);
    await scheduler.stop();
    expect(await engine.history.get(first)).toMatchObject({
      outcome: 'succeeded',
      counts: { succeeded: TARGETS },
    });
    expect(await engine.history.get(during)).toMatchObject({
      outcome: 'skipped',
      reason: `skipped: the previous run (${first}) is still running`,
    });
  });

  it('a worker process killed mid-run leaves the run to another, which finishes it from the checkpoints: no workspace paused twice', async () => {
    const engine = onCluster('cluster-takeover');
    const start = () => {
      const worker = startTakeoverWorker(cluster.current.environment, sim.url, engine.prefix);
      workers.push(worker);
      return worker;
    };
    const runId = await engine.enqueue(policy(), 'fleet-pause');
    const first = start();
    const checkpointed = () => engine.redis.hlen(engine.keys.runTargets(runId));
    await eventually(
      'the first worker well into the run',
      async () => (await checkpointed()) >= 4,
      20_000,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n--- first worker:\n${first.output()}`);
    });
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    const doneByFirst = await checkpointed();
    expect(doneByFirst).toBeLessThan(TARGETS);

    const second = start();
    const run = await engine.waitForRun(runId, 25_000).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n--- second worker:\n${second.output()}`);
    });
    expect(run).toMatchObject({ outcome: 'succeeded', deliveries: 2, counts: { total: TARGETS, failed: 0 } });
    expect(run.counts.succeeded).toBeGreaterThanOrEqual(doneByFirst);
    await eventually('every workspace Stopped', () => workspacesNot(sim, 'Stopped').length === 0);
    const calls = pauseRequests(sim);
    expect(calls.size).toBe(TARGETS);
    for (const made of calls.values()) expect(made.map((call) => call.status)).toEqual([200]);
    expect(second.output()).toContain('run taken over from a worker that stopped mid-run');
  });

  it('nightshift start (scheduler, worker and ops server in one process) runs a scheduled tick, is ready, and shows the queue', async () => {
    const engine = onCluster('cluster-start');
    const { cron, ticks } = secondsCron([4]);
    const dir = mkdtempSync(join(tmpdir(), 'nightshift-cluster-start-'));
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, policy(cron));
    const token = 'cluster-ui-token-0b9d';
    const service = startCli(['start', file], {
      ...cluster.current.environment,
      NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
      NIGHTSHIFT_API_URL: sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_LOG_FORMAT: 'json',
      NIGHTSHIFT_POLL_INTERVAL_MS: '100',
      NIGHTSHIFT_UI_TOKEN: token,
    });
    workers.push(service);
    try {
      const lines = () =>
        service
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as LogLine);
      const listening = await eventually(
        'ops server listening',
        () => lines().find((line) => line.msg === 'ops server listening'),
        15_000,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n--- output:\n${service.output()}`);
      });
      const address = listening.address as string;
      const ready = await eventually('ready', async () => {
        const response = await fetch(`${address}/readyz`);
        return response.status === 200 ? response : undefined;
      });
      expect(await ready.json()).toMatchObject({ ready: true, checks: { redis: { ok: true } } });

      const run = await engine.waitForRun(scheduledRunId('fleet-pause', ticks[0] as Date), 20_000);
      expect(run).toMatchObject({
        outcome: 'succeeded',
        trigger: 'schedule',
        counts: { succeeded: TARGETS },
      });
      const auth = { headers: { authorization: `Bearer ${token}` } };
      const metrics = await (await fetch(`${address}/metrics`, auth)).text();
      expect(metrics).toContain(
        'nightshift_runs_total{job="fleet-pause",action="pause",outcome="succeeded"} 1',
      );
      // the dashboard reads the queue under its hash-tagged prefix, the completed run in it; the
      // run is recorded before its job returns to BullMQ, which then marks it completed
      const completed = async () => {
        const board = (await (await fetch(`${address}/ui/api/queues`, auth)).json()) as {
          queues: { name: string; counts: { completed: number } }[];
        };
        return board.queues.map((queue) => [queue.name, queue.counts.completed]);
      };
      const counted = await eventually('the run completed on the board', async () => {
        const counts = await completed();
        return counts.some(([, count]) => count !== 0) ? counts : undefined;
      });
      expect(counted).toEqual([['runs', 1]]);
      expect(await service.stop('SIGTERM')).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('history retention evicts runs of this job and of others, their summaries with them', async () => {
    const engine = onCluster('cluster-history');
    const history = new RunHistory(engine.redis, {
      prefix: engine.prefix,
      retention: { maxRunsPerJob: 2, maxRunsTotal: 3, maxAgeMs: 3_650 * 86_400_000 },
    });
    const x1 = runSummary({ job: 'x' });
    const x2 = runSummary({ job: 'x' });
    const y1 = runSummary({ job: 'y' });
    const y2 = runSummary({ job: 'y' });
    const y3 = runSummary({ job: 'y' });
    // y2 takes the total over 3 (x1 goes); y3 takes y over 2 (y1 goes)
    for (const run of [x1, x2, y1, y2, y3]) await history.record(run);
    const ids = (runs: readonly RunSummary[]) => runs.map((run) => run.runId);
    expect(ids(await history.list())).toEqual(ids([y3, y2, x2]));
    expect(ids(await history.list({ job: 'x' }))).toEqual(ids([x2]));
    expect(await engine.redis.exists(engine.keys.run(x1.runId), engine.keys.run(y1.runId))).toBe(0);
  });

  it('the API rate limit’s bucket is shared through the cluster', async () => {
    const engine = onCluster('cluster-rate');
    const limiter = new RedisRateLimiter(engine.redis, {
      name: 'api',
      ratePerSecond: 5,
      burst: 5,
      prefix: engine.prefix,
    });
    const started = Date.now();
    for (let i = 0; i < 10; i++) await limiter.acquire();
    // five from the burst, five more at 5 per second
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
  });
});
