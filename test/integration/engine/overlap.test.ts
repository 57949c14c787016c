import { afterEach, describe, expect, it } from 'vitest';
import { scheduledRunId } from '../../../src/queue/run-queue.js';
import { type Engine, eventually, secondsCron, useEngineHarness } from '../../helpers/engine.js';

// each pause takes 450 ms, so a run of three workspaces one at a time takes about 1.4 s
const harness = useEngineHarness(
  { workgroups: 1, workspacesPerWorkgroup: 3 },
  { faults: { latencyMs: 450, operations: ['pauseWorkspace'] } },
);

afterEach(() => {
  harness.sim.reset();
});

function policy(cron: string, overlap?: string): string {
  return `version: 1
jobs:
  slow-pause:
    schedule: "${cron}"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 1${overlap ? `\n    overlap: ${overlap}` : ''}
`;
}

async function schedule(engine: Engine, text: string) {
  const scheduler = engine.scheduler();
  await scheduler.load(engine.parse(text), text);
  await scheduler.start();
  return scheduler;
}

describe('overlap', () => {
  it('skip (the default): a tick while the previous run is still going is recorded as skipped, with why', async () => {
    const engine = harness.engine('overlap-skip');
    // ticks at +0 (a run of about 1.4 s), +1 (during it), +3 (well after it, even on a busy machine)
    const { cron, ticks } = secondsCron([0, 1, 3]);
    const [first, during, after] = ticks.map((at) => scheduledRunId('slow-pause', at)) as [
      string,
      string,
      string,
    ];
    engine.worker(harness.sim.url);
    const scheduler = await schedule(engine, policy(cron));

    const ran = await engine.waitForRun(after, 12_000);
    await scheduler.stop();
    expect(ran).toMatchObject({ outcome: 'succeeded', trigger: 'schedule' });
    expect(await engine.history.get(first)).toMatchObject({ outcome: 'succeeded', counts: { succeeded: 3 } });
    const skipped = await engine.history.get(during);
    expect(skipped).toMatchObject({ outcome: 'skipped', trigger: 'schedule', targets: [] });
    expect(skipped?.reason).toBe(`skipped: the previous run (${first}) is still running`);
    // the skipped tick never started
    expect(engine.lines('run started').map((line) => line.runId)).toEqual([first, after]);
  });

  it('queue: a tick while the previous run is still going runs once that run has finished', async () => {
    const engine = harness.engine('overlap-queue');
    const { cron, ticks } = secondsCron([0, 1]);
    const [first, second] = ticks.map((at) => scheduledRunId('slow-pause', at)) as [string, string];
    engine.worker(harness.sim.url, { overlapRetryMs: 100 });
    const scheduler = await schedule(engine, policy(cron, 'queue'));

    const queued = await engine.waitForRun(second, 12_000);
    await scheduler.stop();
    const previous = await engine.history.get(first);
    expect(previous).toMatchObject({ outcome: 'succeeded', counts: { succeeded: 3 } });
    // waiting its turn is not a redelivery
    expect(queued).toMatchObject({ outcome: 'succeeded', trigger: 'schedule', deliveries: 1 });
    // it waited for the first run: it started after the first finished
    expect(Date.parse(queued.startedAt as string)).toBeGreaterThanOrEqual(
      Date.parse(previous?.finishedAt as string),
    );
    // and found the workspaces already paused by the first
    expect(queued.counts).toMatchObject({ total: 3, skipped: 3 });
    expect(engine.lines('run started').map((line) => line.runId)).toEqual([first, second]);
  });

  it("does not skip a tick whose own run already holds the lock (another scheduler's enqueue)", async () => {
    const engine = harness.engine('overlap-own-lock');
    const { cron, ticks } = secondsCron([0]);
    const runId = scheduledRunId('slow-pause', ticks[0] as Date);
    // the other replica enqueued the tick a moment ago and a worker has started it
    await engine.redis.set(engine.keys.runLock('slow-pause'), runId, 'PX', 10_000);
    const scheduler = await schedule(engine, policy(cron));

    await eventually(
      'the tick handled',
      async () =>
        Number(await engine?.redis.get(engine.keys.lastTick('slow-pause'))) >= (ticks[0] as Date).getTime(),
    );
    await scheduler.stop();
    expect(await engine.history.get(runId)).toBeUndefined();
    expect(await engine.queue.getJob(runId)).toBeDefined();
  });
});
