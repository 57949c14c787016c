import { describe, expect, it } from 'vitest';
import { compactInstant, scheduledRunId } from '../../../src/queue/run-queue.js';
import { type Engine, untilMsIntoSecond, useEngineHarness } from '../../helpers/engine.js';
import { perSecondPolicy } from '../../helpers/policies.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 2 });

const policy = perSecondPolicy;

/** The queued runs of the job, as the scheduler enqueued them. */
async function queuedRuns(engine: Engine) {
  const jobs = await engine.queue.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed']);
  return jobs.map((job) => job.data);
}

/**
 * Starts a scheduler whose job last ticked 10 s ago, as if every scheduler had been down since,
 * and stops it once it has caught up. Returns the last tick it owed (the whole second before now).
 */
async function startAfterDowntime(engine: Engine, text: string): Promise<Date> {
  const now = await untilMsIntoSecond(100);
  const latest = new Date(Math.floor(now.getTime() / 1000) * 1000);
  await engine.redis.set(engine.keys.lastTick('per-second'), String(latest.getTime() - 10_000));
  // (no other scheduler runs: a short handoff keeps the test quick)
  const scheduler = engine.scheduler({ handoffMs: 300 });
  await scheduler.load(engine.parse(text), text);
  await scheduler.start();
  await scheduler.stop();
  return latest;
}

// the fake-clock unit tests (test/unit/scheduler/scheduler.test.ts) cover catchUp: none, the
// handoff to a running scheduler and outages; this is the real-time run against Redis and BullMQ
describe('catch-up after downtime', () => {
  it('runs the most recent missed tick once, as a catch-up, and records the older ticks as missed', async () => {
    const engine = harness.engine('catch-up');
    const text = policy('1m');
    engine.worker(harness.sim.url);
    const latest = await startAfterDowntime(engine, text);

    const runId = scheduledRunId('per-second', latest);
    const run = await engine.waitForRun(runId);
    expect(run).toMatchObject({
      trigger: 'catch-up',
      outcome: 'succeeded',
      scheduledAt: latest.toISOString(),
    });
    const catchUps = (await queuedRuns(engine)).filter((data) => data.trigger === 'catch-up');
    expect(catchUps.map((data) => data.runId)).toEqual([runId]);

    const oldest = new Date(latest.getTime() - 9_000);
    const newestMissed = new Date(latest.getTime() - 1_000);
    const [missed, ...more] = await engine.history.list({ outcome: 'missed' });
    expect(more).toEqual([]);
    expect(missed).toMatchObject({
      runId: `per-second@missed-${compactInstant(newestMissed)}`,
      outcome: 'missed',
      scheduledAt: newestMissed.toISOString(),
      reason: `missed 9 tick(s) from ${oldest.toISOString()} to ${newestMissed.toISOString()}`,
    });
    // no run for any of the missed ticks
    const ran = (await queuedRuns(engine)).map((data) => data.scheduledAt as string);
    expect(ran.filter((at) => Date.parse(at) < latest.getTime())).toEqual([]);
    expect(Number(await engine.redis.get(engine.keys.lastTick('per-second')))).toBeGreaterThanOrEqual(
      latest.getTime(),
    );
  });
});
