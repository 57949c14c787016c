import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/engine/index.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { Engine, eventually, untilMsIntoSecond, useEngineHarness } from '../helpers/engine.js';
import { perSecondPolicy } from '../helpers/policies.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 1 });

const policy = perSecondPolicy;

interface Outage {
  /** Ticks the scheduler handed over as scheduled, by instant. */
  scheduled: number[];
  catchUps: number[];
  missed: RunSummary[];
}

/** A scheduler ticking every second on an engine (a key prefix) of its own. */
interface Ticking {
  engine: Engine;
  scheduler: Scheduler;
}

async function ticksOf(engine: Engine, trigger: string): Promise<number[]> {
  const jobs = await engine.queue.getJobs([
    'waiting',
    'active',
    'completed',
    'failed',
    'delayed',
    'prioritized',
  ]);
  return jobs
    .filter((job) => job.data.trigger === trigger)
    .map((job) => Date.parse(job.data.scheduledAt as string))
    .sort((a, b) => a - b);
}

async function outageOf({ engine }: Ticking): Promise<Outage> {
  return {
    scheduled: await ticksOf(engine, 'schedule'),
    catchUps: await ticksOf(engine, 'catch-up'),
    missed: await engine.history.list({ outcome: 'missed' }),
  };
}

// One outage for both policies: each scheduler has a key prefix of its own and sees the same
// Redis go down and come back, so the two cases cost one outage instead of two.
const engines: Engine[] = [];
let none: Outage;
let withWindow: Outage;
let downFrom: number;
let backAt: number;

/**
 * Two schedulers ticking every second (one per catchUp policy) lose Redis for 4 s (SIGKILL, then
 * started again on the same port and data), and tick on until each has handed over a tick from
 * well after Redis came back: a scheduler handles ticks one turn at a time, so by then its
 * catch-up after the outage is done too.
 */
beforeAll(async () => {
  const start = async (label: string, catchUp: string): Promise<Ticking> => {
    const engine = new Engine(harness.server.url, label);
    engines.push(engine);
    const text = policy(catchUp);
    const scheduler = engine.scheduler({ handoffMs: 300, lateAfterMs: 1500 });
    await scheduler.load(engine.parse(text), text);
    return { engine, scheduler };
  };
  const ticking = [await start('outage-none', 'none'), await start('outage-window', '1m')];
  await untilMsIntoSecond(300);
  await Promise.all(ticking.map(({ scheduler }) => scheduler.start()));
  // both have handed a tick to Redis before it goes
  for (const { engine } of ticking) {
    await eventually(
      'a tick handed over before the outage',
      async () => (await ticksOf(engine, 'schedule')).length > 0,
    );
  }
  downFrom = Date.now();
  await harness.server.kill();
  await sleep(4_000);
  await harness.server.restart();
  backAt = Date.now();
  for (const { engine } of ticking) {
    await eventually(
      'a tick handed over well after Redis came back',
      async () => (await ticksOf(engine, 'schedule')).some((at) => at > backAt + 1_000),
      15_000,
    );
  }
  await Promise.all(ticking.map(({ scheduler }) => scheduler.stop()));
  [none, withWindow] = (await Promise.all(ticking.map(outageOf))) as [Outage, Outage];
}, 40_000);

afterAll(async () => {
  for (const engine of engines) await engine.close();
});

/** Ticks well inside the outage that went to the queue as scheduled, late. */
function lateInside(outage: Outage): number[] {
  return outage.scheduled.filter((at) => at > downFrom + 1_000 && at < backAt - 1_000);
}

describe('a scheduler through a Redis outage', () => {
  it('with catchUp: none records the ticks of the outage as missed and runs none of them late', () => {
    expect(lateInside(none)).toEqual([]);
    expect(none.catchUps).toEqual([]);
    expect(none.missed.length).toBeGreaterThanOrEqual(1);
    expect(none.missed[0]?.reason).toMatch(/^missed \d+ tick\(s\) from /);
    // and it went on ticking once Redis was back
    expect(none.scheduled.filter((at) => at > backAt + 1_000).length).toBeGreaterThanOrEqual(1);
  });

  it('with a catchUp window runs the latest tick of the outage once, as a catch-up, and no other late', () => {
    expect(lateInside(withWindow)).toEqual([]);
    expect(withWindow.catchUps).toHaveLength(1);
    expect(withWindow.catchUps[0]).toBeGreaterThan(downFrom);
    expect(withWindow.scheduled.filter((at) => at > backAt + 1_000).length).toBeGreaterThanOrEqual(1);
  });
});
