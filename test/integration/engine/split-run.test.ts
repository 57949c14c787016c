import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { ApiClient } from '../../../src/api/index.js';
import { recordApiCall, summarize } from '../../../src/engine/index.js';
import { manualRunId, partJobId } from '../../../src/queue/run-queue.js';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { type Engine, eventually, pauseRequests, useEngineHarness } from '../../helpers/engine.js';

const TARGETS = 60;
const PART_SIZE = 20;
const PARTS = TARGETS / PART_SIZE;

// 100 ms per pause, four at a time: a part of 20 takes about half a second or more
const harness = useEngineHarness(
  { workgroups: 6, workspacesPerWorkgroup: 10 },
  { faults: { latencyMs: 100, operations: ['pauseWorkspace'] } },
);

afterEach(() => {
  harness.sim.reset();
});

const POLICY = `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 4
`;

/**
 * A worker that splits runs into parts of 20, one run or part at a time (a run works the parts no
 * worker takes itself), its log lines naming it `name`.
 */
function splittingWorker(engine: Engine, name: string) {
  return engine.worker(harness.sim.url, {
    partSize: PART_SIZE,
    concurrency: 1,
    log: engine.log.child({ name }),
  });
}

/** Which worker started each part of the run, in the order they started. */
function partStarts(engine: Engine, runId: string): { part: number; name: string }[] {
  return engine
    .lines('run started')
    .filter((line) => line.runId === runId && line.part !== undefined)
    .map((line) => ({ part: line.part as number, name: line.name as string }));
}

async function expectPausedOnceAndOwned(engine: Engine, runId: string) {
  const calls = pauseRequests(harness.sim);
  expect(calls.size).toBe(TARGETS);
  for (const made of calls.values()) expect(made.filter((call) => call.status === 200)).toHaveLength(1);
  const owned = await engine.state.ledger.all();
  expect(owned.size).toBe(TARGETS);
  for (const record of owned.values()) expect(record).toMatchObject({ owner: 'fleet-pause', runId });
}

describe('a run over more targets than the part size', () => {
  it('is worked in parts by every worker, from one fleet listing, and recorded as one run', async () => {
    const engine = harness.engine('split-run');
    const workers = [splittingWorker(engine, 'a'), splittingWorker(engine, 'b')];
    // both connected before the run is queued: a worker still connecting when the run's parts
    // are handed out would leave them all to the other
    await Promise.all(workers.map((worker) => worker.worker.waitUntilReady()));
    const runId = await engine.enqueue(POLICY, 'fleet-pause');

    const run = await engine.waitForRun(runId, 30_000);
    expect(run).toMatchObject({
      outcome: 'succeeded',
      deliveries: 1,
      counts: { total: TARGETS, succeeded: TARGETS, failed: 0 },
    });
    expect(run.targets).toHaveLength(TARGETS);
    await expectPausedOnceAndOwned(engine, runId);
    // the run listed the fleet once; its parts read that listing
    expect(harness.sim.requests().filter((entry) => entry.operation === 'listWorkgroups')).toHaveLength(1);
    const starts = partStarts(engine, runId);
    expect(starts.map((start) => start.part).sort()).toEqual([0, 1, 2]);
    expect(new Set(starts.map((start) => start.name))).toEqual(new Set(['a', 'b']));
    expect(engine.lines('run split into parts')).toMatchObject([{ runId, parts: PARTS, targets: TARGETS }]);
    // the run's progress counts the targets every part finished
    expect((await engine.queue.getJob(runId))?.progress).toEqual({ done: TARGETS, total: TARGETS });
    // one summary, and nothing left of the run in Redis: checkpoints, its listing, the job's lock
    // (the worker records the summary first, then clears them and releases the lock)
    expect(await engine.history.count({ job: 'fleet-pause' })).toBe(1);
    await eventually(
      'the run cleared from Redis',
      async () =>
        (await engine.redis.exists(
          engine.keys.runTargets(runId),
          engine.keys.runListing(runId),
          engine.keys.runLock('fleet-pause'),
        )) === 0,
    );
  });

  it('resumes a part whose worker stopped mid-way on another worker, acting on no workspace twice', async () => {
    const engine = harness.engine('split-run-takeover');
    const first = splittingWorker(engine, 'a');
    splittingWorker(engine, 'b');
    const runId = await engine.enqueue(POLICY, 'fleet-pause');
    await eventually(
      'parts under way',
      async () => (await engine.redis.hlen(engine.keys.runTargets(runId))) >= 8,
    );
    await first.close(0);

    const run = await engine.waitForRun(runId, 30_000);
    expect(run).toMatchObject({
      outcome: 'succeeded',
      counts: { total: TARGETS, succeeded: TARGETS, failed: 0 },
    });
    await expectPausedOnceAndOwned(engine, runId);
    // what the stopped worker had under way (the run, or a part) went back to the queue, and the
    // worker still running took it over
    const handedBack = engine.logged.filter(
      (line) => line.name === 'a' && /handed back to the queue/.test(line.msg),
    );
    expect(handedBack.length).toBeGreaterThan(0);
    expect(partStarts(engine, runId).filter((start) => start.name === 'b').length).toBeGreaterThan(0);
    expect(await engine.history.count({ job: 'fleet-pause' })).toBe(1);
  });

  it('holds the job’s run lock while its parts go: a second run of the job is skipped as today', async () => {
    const engine = harness.engine('split-run-overlap');
    splittingWorker(engine, 'a');
    splittingWorker(engine, 'b');
    const runId = await engine.enqueue(POLICY, 'fleet-pause');
    await eventually(
      'parts under way',
      async () => (await engine.redis.hlen(engine.keys.runTargets(runId))) >= 4,
    );
    const second = await engine.enqueue(POLICY, 'fleet-pause');

    expect(await engine.waitForRun(second)).toMatchObject({
      outcome: 'skipped',
      reason: `skipped: the previous run (${runId}) is still running`,
    });
    expect(await engine.waitForRun(runId, 30_000)).toMatchObject({
      outcome: 'succeeded',
      counts: { total: TARGETS, succeeded: TARGETS },
    });
    await expectPausedOnceAndOwned(engine, runId);
  });

  it('is finished by a lone worker with one slot: the run works the parts nobody takes itself, the next beside the last', async () => {
    const engine = harness.engine('split-run-alone');
    // 400 ms a pause: the next part's start (its checkpoints and ledger records read) fits inside
    // the last pauses of the part before even on a loaded machine; at 100 ms it missed once by 24 ms
    harness.sim.setFaults({ latencyMs: 400, operations: ['pauseWorkspace'] });
    onTestFinished(() => void harness.sim.setFaults({ latencyMs: 100, operations: ['pauseWorkspace'] }));
    // its API calls logged as a deployed worker logs them: each line names the part it was made for
    const api = new ApiClient({
      baseUrl: harness.sim.url,
      apiKey: DEFAULT_API_KEY,
      onCall: recordApiCall(engine.log),
    });
    onTestFinished(() => api.close());
    engine.worker(harness.sim.url, { api, partSize: PART_SIZE, concurrency: 1 });
    const runId = await engine.enqueue(POLICY, 'fleet-pause');

    expect(await engine.waitForRun(runId, 30_000)).toMatchObject({
      outcome: 'succeeded',
      counts: { total: TARGETS, succeeded: TARGETS },
    });
    expect(partStarts(engine, runId).map((start) => start.part)).toEqual([0, 1, 2]);
    await expectPausedOnceAndOwned(engine, runId);
    // the job's 4 call slots never drain at a part's end: the next part's first pause reaches the
    // simulator while the last pause of the one before is still in flight
    const partOf = new Map(
      engine
        .lines('api call')
        .filter((line) => line.runId === runId && line.operation === 'pauseWorkspace')
        .map((line) => [line.requestId, line.part as number]),
    );
    expect(partOf.size).toBe(TARGETS);
    const pauses = harness.sim
      .requests()
      .filter((entry) => partOf.has(entry.requestId))
      .map((entry) => ({
        part: partOf.get(entry.requestId),
        sent: Date.parse(entry.time) - entry.delayMs,
        answered: Date.parse(entry.time),
      }));
    for (const part of [0, 1]) {
      const firstOfNext = Math.min(...pauses.filter((p) => p.part === part + 1).map((p) => p.sent));
      const lastAnswer = Math.max(...pauses.filter((p) => p.part === part).map((p) => p.answered));
      expect(firstOfNext).toBeLessThan(lastAnswer);
    }
  });

  it('drops a part whose run is already recorded (failed, abandoned) instead of acting after the run’s end', async () => {
    const engine = harness.engine('split-run-late-part');
    const policySha = await engine.policies.put(POLICY);
    const runId = manualRunId('fleet-pause');
    const at = new Date();
    await engine.history.record(
      summarize(
        { runId, job: 'fleet-pause', action: 'pause', trigger: 'manual', dryRun: false },
        { startedAt: at, finishedAt: at, outcome: 'failed', reason: 'abandoned' },
      ),
    );
    const [ws] = harness.sim.state.workspaces;
    const part = { index: 0, keys: [`${ws?.workgroup_id}/${ws?.workspace_id}`] };
    await engine.queue.add(
      'fleet-pause',
      { runId, job: 'fleet-pause', policySha, trigger: 'manual', dryRun: false, part },
      { jobId: partJobId(runId, 0) },
    );
    splittingWorker(engine, 'a');

    await eventually(
      'the part finished',
      async () => (await (await engine.queue.getJob(partJobId(runId, 0)))?.getState()) === 'completed',
    );
    expect((await engine.queue.getJob(partJobId(runId, 0)))?.returnvalue).toMatchObject({
      outcome: 'dropped',
    });
    expect(pauseRequests(harness.sim).size).toBe(0);
  });

  it('is not split when it has no more targets than the part size', async () => {
    const engine = harness.engine('split-run-small');
    engine.worker(harness.sim.url, { partSize: TARGETS, concurrency: 2 });
    const runId = await engine.enqueue(POLICY, 'fleet-pause');

    expect(await engine.waitForRun(runId, 30_000)).toMatchObject({
      outcome: 'succeeded',
      counts: { total: TARGETS, succeeded: TARGETS },
    });
    expect(engine.lines('run split into parts')).toEqual([]);
    expect(await engine.queue.getJob(partJobId(runId, 0))).toBeUndefined();
  });
});
