import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { nextFirings } from '../../../src/policy/index.js';
import { scheduledRunId } from '../../../src/queue/run-queue.js';
import { type Engine, eventually, untilMsIntoSecond, useEngineHarness } from '../../helpers/engine.js';
import { TWO_TICKING_JOBS } from '../../helpers/policies.js';

const harness = useEngineHarness({ workgroups: 2, workspacesPerWorkgroup: 2 });

const POLICY = TWO_TICKING_JOBS;

// the fake-clock unit tests (test/unit/scheduler/scheduler.test.ts) cover reloads and reconnect
// catch-ups while ticking, outages and clock steps; this is the real-time run against Redis and BullMQ
describe('two schedulers on one Redis', () => {
  it('turn every tick of every job into exactly one run: none twice, none missing', async () => {
    const engine = harness.engine('two-schedulers');
    const policy = engine.parse(POLICY);
    engine.worker(harness.sim.url);
    const replicas = [engine.scheduler(), engine.scheduler()];

    const from = await untilMsIntoSecond(100);
    await Promise.all(replicas.map((scheduler) => scheduler.load(policy, POLICY)));
    await Promise.all(replicas.map((scheduler) => scheduler.start()));
    // five whole seconds of ticks, stopping mid-second so no tick is half handled
    await sleep(from.getTime() + 5_400 - Date.now());
    await Promise.all(replicas.map((scheduler) => scheduler.stop()));
    const until = new Date();

    const expected = policy.jobs.flatMap((job) =>
      nextFirings(job.schedule, { from, count: 20 })
        .filter((firing) => firing.at <= until)
        .map((firing) => ({ job: job.name, at: firing.at.toISOString() })),
    );
    expect(expected.filter((tick) => tick.job === 'every-second')).toHaveLength(5);
    // the worker has every run to do; wait until it has done them
    await eventually('every tick recorded', async () => (await engine?.history.count()) === expected.length);
    // a duplicate run, if there were one, would be recorded by the time the queue is idle
    await queueIdle(engine);

    const recorded = await engine.history.list({ limit: 100 });
    const ticks = recorded.map((run) => ({ job: run.job, at: run.scheduledAt }));
    expect(ticks.sort(byTick)).toEqual([...expected].sort(byTick));
    for (const run of recorded) {
      expect(run.runId).toBe(scheduledRunId(run.job, new Date(run.scheduledAt as string)));
      expect(run).toMatchObject({ trigger: 'schedule', outcome: 'succeeded', deliveries: 1 });
    }
    // each run was executed once, not just recorded once
    const started = engine.lines('run started').map((line) => line.runId);
    expect(started.sort()).toEqual(recorded.map((run) => run.runId).sort());
    // neither replica took the other's enqueue of a tick for a previous run still going
    const handled = engine.lines('ticks handled');
    expect(handled.map((line) => line.skipped)).toEqual(handled.map(() => 0));
    expect(await engine.queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed')).toEqual({
      completed: expected.length,
      failed: 0,
      waiting: 0,
      active: 0,
      delayed: 0,
    });
  });
});

/** Resolves once no run waits, runs or is delayed: nothing more can be recorded. */
async function queueIdle(engine: Engine): Promise<void> {
  await eventually('the queue idle', async () => {
    const counts = await engine.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    return Object.values(counts).every((count) => count === 0);
  });
}

function byTick(a: { job: string; at?: string }, b: { job: string; at?: string }): number {
  return `${a.job} ${a.at}`.localeCompare(`${b.job} ${b.at}`);
}
