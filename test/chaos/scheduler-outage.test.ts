import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/engine/index.js';
import { type Engine, untilMsIntoSecond, useEngineHarness } from '../helpers/engine.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 1 });

const policy = (catchUp: string) => `version: 1
jobs:
  per-second:
    schedule: "* * * * * *"
    action: pause
    target: { workgroups: ["*"] }
    dryRun: true
    catchUp: ${catchUp}
`;

interface Outage {
  /** Ticks the scheduler handed over as scheduled, by instant. */
  scheduled: number[];
  catchUps: number[];
  missed: RunSummary[];
  downFrom: number;
  backAt: number;
}

/**
 * A scheduler ticking every second loses Redis for about 4 s (SIGKILL, then started again on the
 * same port and data), and runs on for a few seconds after it came back.
 */
async function throughOutage(engine: Engine, text: string): Promise<Outage> {
  await untilMsIntoSecond(300);
  const scheduler = engine.scheduler({ handoffMs: 300, lateAfterMs: 1500 });
  await scheduler.load(engine.parse(text), text);
  await scheduler.start();
  await sleep(2_000);
  const downFrom = Date.now();
  await harness.server.kill();
  await sleep(4_000);
  await harness.server.restart();
  const backAt = Date.now();
  await sleep(3_500);
  await scheduler.stop();
  const jobs = await engine.queue.getJobs([
    'waiting',
    'active',
    'completed',
    'failed',
    'delayed',
    'prioritized',
  ]);
  const at = (trigger: string) =>
    jobs
      .filter((job) => job.data.trigger === trigger)
      .map((job) => Date.parse(job.data.scheduledAt as string))
      .sort((a, b) => a - b);
  return {
    scheduled: at('schedule'),
    catchUps: at('catch-up'),
    missed: await engine.history.list({ outcome: 'missed' }),
    downFrom,
    backAt,
  };
}

describe('a scheduler through a Redis outage', () => {
  it('with catchUp: none records the ticks of the outage as missed and runs none of them late', async () => {
    const engine = harness.engine('outage-none');
    const outage = await throughOutage(engine, policy('none'));

    // ticks well inside the outage: none went to the queue as scheduled, late
    const inside = outage.scheduled.filter(
      (at) => at > outage.downFrom + 1_000 && at < outage.backAt - 1_000,
    );
    expect(inside).toEqual([]);
    expect(outage.catchUps).toEqual([]);
    expect(outage.missed.length).toBeGreaterThanOrEqual(1);
    expect(outage.missed[0]?.reason).toMatch(/^missed \d+ tick\(s\) from /);
    // and it went on ticking once Redis was back
    expect(outage.scheduled.filter((at) => at > outage.backAt + 1_000).length).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it('with a catchUp window runs the latest tick of the outage once, as a catch-up, and no other late', async () => {
    const engine = harness.engine('outage-window');
    const outage = await throughOutage(engine, policy('1m'));

    const inside = outage.scheduled.filter(
      (at) => at > outage.downFrom + 1_000 && at < outage.backAt - 1_000,
    );
    expect(inside).toEqual([]);
    expect(outage.catchUps).toHaveLength(1);
    expect(outage.catchUps[0]).toBeGreaterThan(outage.downFrom);
    expect(outage.scheduled.filter((at) => at > outage.backAt + 1_000).length).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
