import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { silentLogger } from '../../../src/log/logger.js';
import { parsePolicy } from '../../../src/policy/index.js';
import { Scheduler, type SchedulerOptions } from '../../../src/scheduler/scheduler.js';
import { FakeClock } from '../../helpers/clock.js';
import { perSecondPolicy, TWO_TICKING_JOBS } from '../../helpers/policies.js';
import { MemorySchedulerPorts } from '../../helpers/scheduler-ports.js';

/**
 * The scheduler on in-memory ports and a fake clock: minutes of ticks, outages and clock steps
 * run in milliseconds. test/integration/engine (catch-up, two-schedulers, lead, windows) keeps a
 * real-time run of each behaviour against Redis and BullMQ.
 */
const START = '2026-11-27T10:00:00.300Z';

const POLICY = TWO_TICKING_JOBS;

const PER_MINUTE = `version: 1
jobs:
  per-minute:
    schedule: "0 * * * * *"
    action: pause
    target: { workgroups: ["*"] }
    dryRun: true
    catchUp: none
`;

function parse(text: string) {
  return parsePolicy(text, 'policy.yaml', { registry: actionRegistry, env: {} });
}

function scheduler(ports: MemorySchedulerPorts, clock: FakeClock, options: Partial<SchedulerOptions> = {}) {
  return new Scheduler({ ...ports.ports, clock, log: silentLogger, leadMs: 0, ...options });
}

async function started(ports: MemorySchedulerPorts, clock: FakeClock, text: string, options = {}) {
  const replica = scheduler(ports, clock, options);
  await replica.load(parse(text), text);
  const starting = replica.start();
  // the start's catch-up may wait out a handoff
  await clock.advance(0);
  await starting;
  return replica;
}

/** `job@instant (trigger)` for each second in [from, to] on which `every` divides the second. */
function ticks(job: string, from: string, to: string, every = 1, trigger = 'schedule'): string[] {
  const out: string[] = [];
  for (let at = Math.ceil(Date.parse(from) / 1000) * 1000; at <= Date.parse(to); at += 1000) {
    if (new Date(at).getUTCSeconds() % every === 0)
      out.push(`${job}@${new Date(at).toISOString()} (${trigger})`);
  }
  return out;
}

describe('Scheduler on a fake clock', () => {
  it('hands each tick over once, on its instant, and nothing before it', async () => {
    const clock = new FakeClock(START);
    const ports = new MemorySchedulerPorts();
    const replica = await started(ports, clock, POLICY);
    await clock.advance(699);
    expect(ports.runs()).toEqual([]);
    await clock.advance(1);
    expect(ports.runs()).toEqual(['every-second@2026-11-27T10:00:01.000Z (schedule)']);
    await clock.advance(4_000);
    await replica.stop();
    expect(ports.runs()).toEqual(
      [
        ...ticks('every-second', START, '2026-11-27T10:00:05Z'),
        ...ticks('every-other-second', START, '2026-11-27T10:00:05Z', 2),
      ].sort(),
    );
    expect(ports.recorded).toEqual([]);
    expect(ports.ticks.get('every-second')).toBe(Date.parse('2026-11-27T10:00:05Z'));
  });

  it('hands a tick over `leadMs` ahead of its instant', async () => {
    const clock = new FakeClock('2026-11-27T10:00:30Z');
    const ports = new MemorySchedulerPorts();
    const replica = await started(ports, clock, PER_MINUTE, { leadMs: 2_000 });
    await clock.advanceTo('2026-11-27T10:00:57.999Z');
    expect(ports.runs()).toEqual([]);
    await clock.advance(1);
    expect(ports.runs()).toEqual(['per-minute@2026-11-27T10:01:00.000Z (schedule)']);
    await replica.stop();
  });

  it('two schedulers on one store turn every tick of every job into one run: none twice, none missed', async () => {
    const clock = new FakeClock(START);
    const ports = new MemorySchedulerPorts();
    const replicas = [await started(ports, clock, POLICY), await started(ports, clock, POLICY)];
    await clock.advance(5_000);
    await Promise.all(replicas.map((replica) => replica.stop()));
    expect(ports.runs()).toEqual(
      [
        ...ticks('every-second', START, '2026-11-27T10:00:05.300Z'),
        ...ticks('every-other-second', START, '2026-11-27T10:00:05.300Z', 2),
      ].sort(),
    );
    // each replica handed each tick over (the queue kept one), and neither recorded one as missed
    expect(ports.handedOver).toHaveLength(2 * ports.queued.size);
    expect(ports.recorded).toEqual([]);
  });

  it('one scheduler taking reloads and reconnect catch-ups while it ticks turns every tick into one scheduled run and counts none as missed', async () => {
    const clock = new FakeClock(START);
    const ports = new MemorySchedulerPorts();
    const policy = parse(POLICY);
    const replica = await started(ports, clock, POLICY, { handoffMs: 300 });
    const churn: Promise<void>[] = [];
    for (let step = 0; step < 60; step++) {
      churn.push(replica.load(policy, POLICY), replica.catchUp());
      await clock.advance(70);
    }
    await clock.advance(300);
    await Promise.all(churn);
    await replica.stop();
    const until = new Date(clock.now()).toISOString();
    expect(ports.runs()).toEqual(
      [...ticks('every-second', START, until), ...ticks('every-other-second', START, until, 2)].sort(),
    );
    expect(ports.recorded).toEqual([]);
  });
});

describe('Scheduler catch-up on a fake clock', () => {
  async function afterDowntime(text: string) {
    const clock = new FakeClock(START);
    const ports = new MemorySchedulerPorts();
    ports.ticks.set('per-second', Date.parse('2026-11-27T09:59:50Z'));
    const replica = await started(ports, clock, text, { handoffMs: 300 });
    await replica.stop();
    return ports;
  }

  it('runs the most recent missed tick once, as a catch-up, and records the older ticks as missed', async () => {
    const ports = await afterDowntime(perSecondPolicy('1m'));
    expect(ports.runs()).toEqual(['per-second@2026-11-27T10:00:00.000Z (catch-up)']);
    expect(ports.recorded).toEqual([
      expect.objectContaining({
        runId: 'per-second@missed-20261127T095959.000Z',
        outcome: 'missed',
        reason: 'missed 9 tick(s) from 2026-11-27T09:59:51.000Z to 2026-11-27T09:59:59.000Z',
      }),
    ]);
    expect(ports.ticks.get('per-second')).toBe(Date.parse('2026-11-27T10:00:00Z'));
  });

  it('with catchUp: none runs nothing it missed and records every missed tick as missed', async () => {
    const ports = await afterDowntime(perSecondPolicy('none'));
    expect(ports.runs()).toEqual([]);
    expect(ports.recorded).toEqual([
      expect.objectContaining({
        outcome: 'missed',
        reason: 'missed 10 tick(s) from 2026-11-27T09:59:51.000Z to 2026-11-27T10:00:00.000Z',
      }),
    ]);
  });

  /** A scheduler joining one that handled the 09:59:59 tick and is handling 10:00:00's now. */
  async function joiningAfterTick() {
    const clock = new FakeClock(START);
    const ports = new MemorySchedulerPorts();
    ports.ticks.set('per-second', Date.parse('2026-11-27T09:59:59Z'));
    const text = perSecondPolicy('none');
    const joining = scheduler(ports, clock, { handoffMs: 500 });
    await joining.load(parse(text), text);
    return { clock, ports, joining };
  }

  it('does not count a tick another scheduler records within the handoff time as missed', async () => {
    const { clock, ports, joining } = await joiningAfterTick();
    // the running scheduler records the 10:00:00 tick 150 ms from now
    clock.setTimer(150, () => ports.ticks.set('per-second', Date.parse('2026-11-27T10:00:00Z')));
    const catchingUp = joining.catchUp();
    await clock.advance(200);
    expect(ports.recorded).toEqual([]);
    await clock.advance(300);
    await catchingUp;
    expect(ports.recorded).toEqual([]);
    expect(ports.runs()).toEqual([]);
  });

  it('counts an unrecorded tick as missed once the handoff time has passed', async () => {
    const { clock, ports, joining } = await joiningAfterTick();
    const catchingUp = joining.catchUp();
    // the 10:00:00 tick is given until 10:00:00.500 to be recorded by whoever handles it
    await clock.advance(199);
    expect(ports.recorded).toEqual([]);
    await clock.advance(1);
    await catchingUp;
    expect(ports.recorded).toEqual([
      expect.objectContaining({ outcome: 'missed', scheduledAt: '2026-11-27T10:00:00.000Z' }),
    ]);
  });

  it('leaves a tick Redis held up past `lateAfterMs` to the catch-up rules: recorded as missed, not run late', async () => {
    const clock = new FakeClock(START);
    const ports = new MemorySchedulerPorts();
    const replica = await started(ports, clock, PER_MINUTE, { lateAfterMs: 5_000 });
    ports.down = true;
    await clock.advanceTo('2026-11-27T10:01:08Z');
    expect(ports.runs()).toEqual([]);
    ports.down = false;
    // what the role does on Redis's `ready`
    await replica.catchUp();
    await replica.stop();
    expect(ports.runs()).toEqual([]);
    expect(ports.recorded).toEqual([
      expect.objectContaining({ outcome: 'missed', scheduledAt: '2026-11-27T10:01:00.000Z' }),
    ]);
  });

  it('notices a step of the wall clock within `maxSleepMs`: ticks stepped over are missed, the next runs on time', async () => {
    const clock = new FakeClock('2026-11-27T10:00:30Z');
    const ports = new MemorySchedulerPorts();
    const replica = await started(ports, clock, PER_MINUTE, { maxSleepMs: 10_000 });
    // a laptop resumed after ten minutes asleep: the wall clock moves, the timers do not
    clock.jump(10 * 60_000);
    await clock.advance(10_000);
    expect(ports.runs()).toEqual([]);
    expect(ports.recorded).toEqual([
      expect.objectContaining({
        outcome: 'missed',
        reason: expect.stringMatching(/^missed \d+ tick\(s\)/),
      }),
    ]);
    await clock.advanceTo('2026-11-27T10:11:00Z');
    await replica.stop();
    expect(ports.runs()).toEqual(['per-minute@2026-11-27T10:11:00.000Z (schedule)']);
  });
});

describe('Scheduler suspensions on a fake clock', () => {
  it('records the ticks of a suspended job as skipped, saying since when and why, and runs them again once unsuspended', async () => {
    const clock = new FakeClock(START);
    const ports = new MemorySchedulerPorts();
    ports.suspended.set('per-second', {
      job: 'per-second',
      since: '2026-11-27T09:00:00.000Z',
      reason: 'incident',
    });
    const replica = await started(ports, clock, perSecondPolicy('none'));
    await clock.advance(2_000);
    expect(ports.runs()).toEqual([]);
    expect(ports.recorded.map((summary) => [summary.outcome, summary.reason])).toEqual([
      ['skipped', 'skipped: suspended since 2026-11-27T09:00:00.000Z (incident)'],
      ['skipped', 'skipped: suspended since 2026-11-27T09:00:00.000Z (incident)'],
    ]);
    ports.suspended.clear();
    await clock.advance(1_000);
    await replica.stop();
    expect(ports.runs()).toEqual(['per-second@2026-11-27T10:00:03.000Z (schedule)']);
  });

  it('a suspension with an end skips the ticks before it and runs the ticks from it, with nobody unsuspending', async () => {
    const clock = new FakeClock(START);
    const ports = new MemorySchedulerPorts();
    // the memory port hands out every record; the end is judged against each tick's own instant
    ports.suspended.set('per-second', {
      job: 'per-second',
      since: '2026-11-27T09:00:00.000Z',
      until: '2026-11-27T10:00:02.500Z',
    });
    const replica = await started(ports, clock, perSecondPolicy('none'));
    await clock.advance(4_000);
    await replica.stop();
    expect(ports.recorded.map((summary) => summary.reason)).toEqual([
      'skipped: suspended since 2026-11-27T09:00:00.000Z until 2026-11-27T10:00:02.500Z',
      'skipped: suspended since 2026-11-27T09:00:00.000Z until 2026-11-27T10:00:02.500Z',
    ]);
    expect(ports.runs()).toEqual([
      'per-second@2026-11-27T10:00:03.000Z (schedule)',
      'per-second@2026-11-27T10:00:04.000Z (schedule)',
    ]);
  });

  it('records the ticks of a job suspended in the policy as skipped', async () => {
    const clock = new FakeClock(START);
    const ports = new MemorySchedulerPorts();
    const replica = await started(ports, clock, perSecondPolicy('none', '    suspend: true\n'));
    await clock.advance(1_000);
    await replica.stop();
    expect(ports.runs()).toEqual([]);
    expect(ports.recorded).toEqual([
      expect.objectContaining({ outcome: 'skipped', reason: 'skipped: suspended in the policy' }),
    ]);
  });
});
