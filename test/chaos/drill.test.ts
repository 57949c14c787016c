import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, type SimulatorHandle } from '../../src/sim/index.js';
import {
  type CliProcess,
  Engine,
  eventually,
  pauseRequests,
  startCli,
  startFleetSim,
  workspacesNot,
} from '../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';
import { assertDistFresh, formatReport, runChaosDrill } from './drill.js';

/**
 * The chaos drill, short: 200 workspaces, 3 workers, 2 schedulers, ticks every 10 s (pause,
 * resume, pause…) for 36 s of chaos (a worker SIGKILLed about every 12 s, always one executing
 * a run; Redis down for 1.5 s once; a scheduler SIGKILLed once), then one tick in quiet. About
 * 75 s. `npm run chaos` runs it at full size; test/chaos/drill.ts defines every figure.
 */
describe('chaos drill (short)', () => {
  it('loses no run, duplicates none, and leaves every workspace in the state of the last action', async () => {
    assertDistFresh();
    const report = await runChaosDrill({
      workgroups: 20,
      workspacesPerWorkgroup: 10,
      tickSeconds: 10,
      chaosMs: 36_000,
      killEveryMs: 12_000,
      concurrency: 20,
      seed: 7,
    });
    const text = formatReport(report);
    const failed = report.goals.filter((goal) => !goal.ok).map((goal) => `${goal.name}: ${goal.detail}`);
    expect(failed, text).toEqual([]);
    expect(report.ticks.executed, text).toBe(report.ticks.expected);
    expect(report.ticks.expected, text).toBeGreaterThanOrEqual(5);
    expect(report.ticks.lost, text).toEqual([]);
    expect(report.ticks.duplicated, text).toEqual([]);
    expect(report.desiredState.percent, text).toBe(100);
    // the chaos happened: kills mid-run, the Redis restart and the scheduler restart
    expect(report.kills.filter((kill) => kill.runs.length > 0).length, text).toBeGreaterThanOrEqual(1);
    expect(report.restarts.map((restart) => restart.what).sort(), text).toEqual(['redis', 'scheduler']);
    expect(report.api.injected.error + report.api.injected.hang, text).toBeGreaterThan(0);
  }, 180_000);
});

/**
 * Found by the drill: a killed worker's run lost its job's run lock when the lock expired
 * together with BullMQ's claim, so the next tick's run, waiting its turn (`overlap: queue`),
 * took the lock before the stalled-job check had handed the killed run to another worker; the
 * two runs of the job then ran out of order, the older one last.
 */
describe("a killed worker's run and the job's next run (overlap: queue)", () => {
  const FLEET = { workgroups: 6, workspacesPerWorkgroup: 5 };
  const POLICY = `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 1
    overlap: queue
`;
  let server: TestRedis;
  let sim: SimulatorHandle;
  let engine: Engine | undefined;
  const workers: CliProcess[] = [];

  beforeAll(async () => {
    assertDistFresh();
    [server, sim] = await Promise.all([
      startTestRedis(),
      // 120 ms per pause, one at a time: a run takes about 4 s
      startFleetSim(FLEET, { faults: { latencyMs: 120, operations: ['pauseWorkspace'] } }),
    ]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL')));
    await engine?.close();
    engine = undefined;
  });
  afterAll(async () => {
    await sim?.close();
    await server?.stop();
  });

  function startWorker(prefix: string): CliProcess {
    const worker = startCli(['worker'], {
      REDIS_URL: server.url,
      NIGHTSHIFT_API_URL: sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_REDIS_PREFIX: prefix,
      NIGHTSHIFT_LOCK_MS: '1500',
      NIGHTSHIFT_POLL_INTERVAL_MS: '200',
      NIGHTSHIFT_SHUTDOWN_GRACE_MS: '2000',
      NIGHTSHIFT_LOG_LEVEL: 'info',
    });
    workers.push(worker);
    return worker;
  }

  it('are executed one at a time and in order: the resumed run keeps the lock, the next one waits for it', async () => {
    engine = new Engine(server.url, 'lock-handover');
    const current = engine;
    const first = await engine.enqueue(POLICY, 'fleet-pause');
    const doomed = startWorker(engine.prefix);
    await eventually(
      'the first run under way',
      async () => (await current.redis.hlen(current.keys.runTargets(first))) >= 3,
      15_000,
    );
    const second = await engine.enqueue(POLICY, 'fleet-pause');
    startWorker(engine.prefix);
    await eventually(
      'the second run waiting for the job lock',
      async () => (await (await current.queue.getJob(second))?.getState()) === 'delayed',
      15_000,
    );
    expect(await doomed.stop('SIGKILL')).toBe('SIGKILL');
    startWorker(engine.prefix);

    const [firstRun, secondRun] = await Promise.all([
      engine.waitForRun(first, 30_000),
      engine.waitForRun(second, 30_000),
    ]);
    expect(firstRun).toMatchObject({ outcome: 'succeeded', deliveries: 2 });
    expect(secondRun.outcome).toBe('succeeded');
    expect(Date.parse(secondRun.startedAt as string)).toBeGreaterThanOrEqual(
      Date.parse(firstRun.finishedAt as string),
    );
    // the first run paused every workspace (one in flight at the kill may be found already paused), the second none
    const total = FLEET.workgroups * FLEET.workspacesPerWorkgroup;
    expect(firstRun.counts).toMatchObject({ total, failed: 0 });
    expect(firstRun.counts.succeeded).toBeGreaterThanOrEqual(total - 1);
    expect(secondRun.counts).toMatchObject({ total, skipped: total });
    await eventually('every workspace Stopped', () => workspacesNot(sim, 'Stopped').length === 0);
    for (const made of pauseRequests(sim).values()) expect(made.map((call) => call.status)).toEqual([200]);
  }, 60_000);
});
