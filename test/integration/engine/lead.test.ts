import { describe, expect, it } from 'vitest';
import { scheduledRunId } from '../../../src/queue/run-queue.js';
import { eventually, secondsCron, useEngineHarness } from '../../helpers/engine.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 2 });

const LEAD_MS = 1500;

const policy = (cron: string) => `version: 1
jobs:
  nightly:
    schedule: "${cron}"
    action: pause
    target: { workgroups: ["*"] }
    dryRun: true
`;

describe('ticks handed to the queue ahead of their instant', () => {
  it('a run is enqueued about leadMs early and still starts on its instant, not before', async () => {
    const engine = harness.engine('lead');
    const { cron, ticks } = secondsCron([3, 4]);
    engine.worker(harness.sim.url);
    const scheduler = engine.scheduler({ leadMs: LEAD_MS });
    const text = policy(cron);
    await scheduler.load(engine.parse(text), text);
    await scheduler.start();

    for (const tick of ticks) {
      const runId = scheduledRunId('nightly', tick);
      const run = await engine.waitForRun(runId, 10_000);
      const queued = await engine.queue.getJob(runId);
      expect(run.outcome).toBe('succeeded');
      // handed over well before the tick (the timer wakes leadMs early)
      expect(tick.getTime() - (queued?.timestamp ?? Number.POSITIVE_INFINITY)).toBeGreaterThan(LEAD_MS - 300);
      // the worker held the run before its tick, so nothing between queue and worker delays its
      // start; it started once the tick came, before the next one (how soon is schedule-lag's
      // figure: under a full test suite on two cores a timer can fire 260 ms late)
      expect(queued?.processedOn).toBeLessThan(tick.getTime());
      const lag = Date.parse(run.startedAt as string) - tick.getTime();
      expect(lag).toBeGreaterThanOrEqual(0);
      expect(lag).toBeLessThan(1_000);
    }
    await scheduler.stop();
  });

  it('a job suspended after its tick was handed over is skipped when the tick comes', async () => {
    const engine = harness.engine('lead-suspend');
    const { cron, ticks } = secondsCron([2], 200);
    const runId = scheduledRunId('nightly', ticks[0] as Date);
    engine.worker(harness.sim.url);
    const scheduler = engine.scheduler({ leadMs: 3000 });
    const text = policy(cron);
    await scheduler.load(engine.parse(text), text);
    await scheduler.start();
    await eventually('the tick handed over', () => engine.queue.getJob(runId));
    await engine.suspensions.suspend('nightly', { reason: 'incident' });
    const since = (await engine.suspensions.get('nightly'))?.since;

    const run = await engine.waitForRun(runId, 10_000);
    await scheduler.stop();
    expect(run).toMatchObject({ outcome: 'skipped', reason: `skipped: suspended since ${since} (incident)` });
    expect(engine.lines('run started')).toEqual([]);
  });

  it('a worker closing while a run waits for its tick hands it back at once; another worker starts it on time', async () => {
    const engine = harness.engine('lead-handback');
    const { cron, ticks } = secondsCron([3], 200);
    const tick = ticks[0] as Date;
    const runId = scheduledRunId('nightly', tick);
    const first = engine.worker(harness.sim.url);
    const scheduler = engine.scheduler({ leadMs: 2500 });
    const text = policy(cron);
    await scheduler.load(engine.parse(text), text);
    await scheduler.start();
    await eventually(
      'the first worker holding the run',
      async () => (await engine.queue.getJob(runId))?.processedOn,
    );

    const closing = Date.now();
    await first.close(30_000);
    // it did not wait out the grace period, nor the tick
    expect(Date.now() - closing).toBeLessThan(tick.getTime() - closing);
    engine.worker(harness.sim.url);

    const run = await engine.waitForRun(runId, 10_000);
    await scheduler.stop();
    expect(run.outcome).toBe('succeeded');
    expect(Date.parse(run.startedAt as string) - tick.getTime()).toBeGreaterThanOrEqual(0);
    expect(engine.lines('run started').map((line) => line.runId)).toEqual([runId]);
  });
});
