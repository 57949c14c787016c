import { Cron } from 'croner';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkCron,
  describeInstant,
  type Firing,
  nextFiring,
  nextFirings,
} from '../../../src/policy/index.js';

const formats = new Map<string, Intl.DateTimeFormat>();

/** Wall-clock time in a zone, computed here independently of src/policy/timezone.ts. */
function wall(instant: number, timeZone: string): string {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(timeZone, format);
  }
  const parts = format.formatToParts(instant);
  const get = (type: string) => parts.find((part) => part.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}:${get('second')}`;
}

function locals(firings: readonly Firing[], timeZone: string): string[] {
  return firings.map((firing) => describeInstant(firing.at, timeZone).local);
}

/** Every firing scheduled for one local date. */
function firingsOn(cron: string, timeZone: string, localDate: string): Firing[] {
  const found: Firing[] = [];
  let from = new Date(Date.parse(`${localDate}T00:00:00Z`) - 2 * 86_400_000);
  for (;;) {
    const batch = nextFirings({ cron, timezone: timeZone }, { from, count: 64 });
    for (const firing of batch) {
      if (firing.localDate > localDate) return found;
      if (firing.localDate === localDate) found.push(firing);
    }
    const last = batch[batch.length - 1];
    if (!last) return found;
    from = last.at;
  }
}

interface Transition {
  readonly zone: string;
  readonly date: string;
  /** A fixed local time inside the gap or the repeated hour, and where the job must fire. */
  readonly cron: string;
  readonly fires: string;
}

// 2026 transition days: spring forward (a gap) and fall back (a repeated hour).
const SPRING_FORWARD: readonly Transition[] = [
  { zone: 'Europe/Berlin', date: '2026-03-29', cron: '30 2 * * *', fires: '2026-03-29T03:00:00+02:00' },
  { zone: 'America/New_York', date: '2026-03-08', cron: '30 2 * * *', fires: '2026-03-08T03:00:00-04:00' },
  { zone: 'Australia/Sydney', date: '2026-10-04', cron: '30 2 * * *', fires: '2026-10-04T03:00:00+11:00' },
];
const FALL_BACK: readonly Transition[] = [
  { zone: 'Europe/Berlin', date: '2026-10-25', cron: '30 2 * * *', fires: '2026-10-25T02:30:00+02:00' },
  { zone: 'America/New_York', date: '2026-11-01', cron: '30 1 * * *', fires: '2026-11-01T01:30:00-04:00' },
  { zone: 'Australia/Sydney', date: '2026-04-05', cron: '30 2 * * *', fires: '2026-04-05T02:30:00+11:00' },
];

describe('fixed-time jobs on daylight-saving transition days', () => {
  it.each(SPRING_FORWARD)(
    '$zone: a time inside the spring-forward gap fires once, when the gap ends',
    (case_) => {
      expect(locals(firingsOn(case_.cron, case_.zone, case_.date), case_.zone)).toEqual([case_.fires]);
    },
  );

  it.each(FALL_BACK)(
    '$zone: a time inside the repeated hour fires once, at its first occurrence',
    (case_) => {
      expect(locals(firingsOn(case_.cron, case_.zone, case_.date), case_.zone)).toEqual([case_.fires]);
    },
  );

  it.each([...SPRING_FORWARD, ...FALL_BACK])(
    '$zone $date: a time outside the transition fires once, at its usual wall-clock time',
    (case_) => {
      const firings = firingsOn('0 20 * * *', case_.zone, case_.date);
      expect(firings.map((firing) => wall(firing.at.getTime(), case_.zone))).toEqual([
        `${case_.date}T20:00:00`,
      ]);
    },
  );

  it('Asia/Kolkata has no transitions: a 02:30 job fires daily at +05:30 through Europe’s transition days', () => {
    const firings = nextFirings(
      { cron: '30 2 * * *', timezone: 'Asia/Kolkata' },
      { from: new Date('2026-03-27T00:00:00Z'), count: 4 },
    );
    expect(locals(firings, 'Asia/Kolkata')).toEqual([
      '2026-03-28T02:30:00+05:30',
      '2026-03-29T02:30:00+05:30',
      '2026-03-30T02:30:00+05:30',
      '2026-03-31T02:30:00+05:30',
    ]);
  });

  it('a list of hours is fixed-time too: each listed time fires once on the spring-forward day', () => {
    expect(checkCron('30 2,14 * * *').kind).toBe('fixed');
    expect(locals(firingsOn('30 2,14 * * *', 'Europe/Berlin', '2026-03-29'), 'Europe/Berlin')).toEqual([
      '2026-03-29T03:00:00+02:00',
      '2026-03-29T14:30:00+02:00',
    ]);
  });

  it('listed times that land on the same instant (02:00 moved to 03:00, and 03:00) fire once', () => {
    expect(locals(firingsOn('0 2,3 * * *', 'Europe/Berlin', '2026-03-29'), 'Europe/Berlin')).toEqual([
      '2026-03-29T03:00:00+02:00',
    ]);
  });

  it('a gap that ends on the next day still fires (America/Nuuk springs forward at 23:00)', () => {
    const firings = firingsOn('30 23 * * *', 'America/Nuuk', '2026-03-28');
    expect(locals(firings, 'America/Nuuk')).toEqual(['2026-03-29T00:00:00-01:00']);
  });

  it('croner 11 on its own drops that Nuuk firing, which is why nextFirings maps wall times itself', () => {
    const croner = new Cron('30 23 * * *', { timezone: 'America/Nuuk' });
    const runs = croner.nextRuns(2, new Date('2026-03-28T12:00:00Z')).map((run) => run.toISOString());
    expect(runs).toEqual(['2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z']);
  });

  it('a half-hour shift (Australia/Lord_Howe) moves a time in its gap to the gap’s end', () => {
    expect(
      locals(firingsOn('15 2 * * *', 'Australia/Lord_Howe', '2026-10-04'), 'Australia/Lord_Howe'),
    ).toEqual(['2026-10-04T02:30:00+11:00']);
  });

  it('counting from inside the repeated hour, after the first occurrence, the next firing is the next day', () => {
    const next = nextFiring(
      { cron: '30 2 * * *', timezone: 'Europe/Berlin' },
      new Date('2026-10-25T00:45:00Z'),
    );
    expect(next && describeInstant(next.at, 'Europe/Berlin').local).toBe('2026-10-26T02:30:00+01:00');
  });
});

const TRANSITION_DAYS = [
  { zone: 'Europe/Berlin', spring: '2026-03-29', fall: '2026-10-25' },
  { zone: 'America/New_York', spring: '2026-03-08', fall: '2026-11-01' },
  { zone: 'Australia/Sydney', spring: '2026-10-04', fall: '2026-04-05' },
];

describe('interval jobs follow elapsed time', () => {
  it.each(TRANSITION_DAYS)('$zone: hourly fires 23 times on the short day and 25 on the long day', (days) => {
    expect(firingsOn('0 * * * *', days.zone, days.spring)).toHaveLength(23);
    expect(firingsOn('0 * * * *', days.zone, days.fall)).toHaveLength(25);
  });

  it.each(TRANSITION_DAYS)(
    '$zone: every 15 minutes stays 15 real minutes apart through both transitions',
    (days) => {
      for (const date of [days.spring, days.fall]) {
        const instants = firingsOn('*/15 * * * *', days.zone, date).map((firing) => firing.at.getTime());
        expect(instants.length).toBe(date === days.spring ? 92 : 100);
        for (let index = 1; index < instants.length; index += 1) {
          expect((instants[index] ?? 0) - (instants[index - 1] ?? 0)).toBe(15 * 60_000);
        }
      }
    },
  );

  it('Asia/Kolkata: hourly fires 24 times a day, at :00 local (:30 UTC)', () => {
    const firings = firingsOn('0 * * * *', 'Asia/Kolkata', '2026-03-29');
    expect(firings).toHaveLength(24);
    expect(firings.every((firing) => firing.at.getUTCMinutes() === 30)).toBe(true);
  });

  it('Europe/Berlin: hourly runs 02:00 twice in the repeated hour, once per offset', () => {
    const twoOClock = locals(firingsOn('0 * * * *', 'Europe/Berlin', '2026-10-25'), 'Europe/Berlin').filter(
      (local) => local.includes('T02:00'),
    );
    expect(twoOClock).toEqual(['2026-10-25T02:00:00+02:00', '2026-10-25T02:00:00+01:00']);
  });

  it('Europe/Berlin: every 15 minutes skips the times that do not exist and goes on at 03:00', () => {
    const firings = nextFirings(
      { cron: '*/15 * * * *', timezone: 'Europe/Berlin' },
      { from: new Date('2026-03-29T00:40:00Z'), count: 3 },
    );
    expect(locals(firings, 'Europe/Berlin')).toEqual([
      '2026-03-29T01:45:00+01:00',
      '2026-03-29T03:00:00+02:00',
      '2026-03-29T03:15:00+02:00',
    ]);
  });

  it('a step on the hour field is an interval job: 02:00 is skipped on the spring-forward day', () => {
    expect(checkCron('0 */2 * * *').kind).toBe('interval');
    const hours = locals(firingsOn('0 */2 * * *', 'Europe/Berlin', '2026-03-29'), 'Europe/Berlin').map(
      (local) => local.slice(11, 16),
    );
    expect(hours.slice(0, 3)).toEqual(['00:00', '04:00', '06:00']);
  });

  it('counting from inside the repeated hour, the next hourly firing is its second 02:00', () => {
    const next = nextFiring(
      { cron: '0 * * * *', timezone: 'Europe/Berlin' },
      new Date('2026-10-25T00:30:00Z'),
    );
    expect(next && describeInstant(next.at, 'Europe/Berlin').local).toBe('2026-10-25T02:00:00+01:00');
  });
});

describe('nextFirings up to an instant', () => {
  it('stops at `until`: the firings in (from, until] and no more, however large the count', () => {
    const firings = nextFirings(
      { cron: '* * * * * *', timezone: 'UTC' },
      { from: new Date('2026-11-27T10:00:00Z'), until: new Date('2026-11-27T10:00:03Z'), count: 1001 },
    );
    expect(firings.map((firing) => firing.at.toISOString())).toEqual([
      '2026-11-27T10:00:01.000Z',
      '2026-11-27T10:00:02.000Z',
      '2026-11-27T10:00:03.000Z',
    ]);
  });

  it('keeps both 02:00 firings of the repeated hour when `until` is between them', () => {
    const schedule = { cron: '0 * * * *', timezone: 'Europe/Berlin' };
    const from = new Date('2026-10-24T23:30:00Z');
    const until = new Date('2026-10-25T01:00:00Z');
    const bounded = nextFirings(schedule, { from, until, count: 1001 });
    const all = nextFirings(schedule, { from, count: 10 }).filter((firing) => firing.at <= until);
    expect(bounded).toEqual(all);
    expect(locals(bounded, 'Europe/Berlin')).toEqual([
      '2026-10-25T02:00:00+02:00',
      '2026-10-25T02:00:00+01:00',
    ]);
  });
});

describe('schedule details', () => {
  it('six fields read seconds first', () => {
    const next = nextFiring({ cron: '30 0 20 * * *', timezone: 'UTC' }, new Date('2026-01-01T00:00:00Z'));
    expect(next?.at.toISOString()).toBe('2026-01-01T20:00:30.000Z');
  });

  it('firings on skipped local dates are left out, and the count is still met', () => {
    const firings = nextFirings(
      { cron: '0 20 * * *', timezone: 'Europe/Berlin' },
      { from: new Date('2026-12-23T00:00:00Z'), count: 3, skipDates: new Set(['2026-12-24', '2026-12-25']) },
    );
    expect(firings.map((firing) => firing.localDate)).toEqual(['2026-12-23', '2026-12-26', '2026-12-27']);
  });

  it('skipped dates are local dates of the job’s zone, not UTC dates', () => {
    // 07:00 in Sydney on 2026-12-25 is still 2026-12-24 in UTC.
    const firings = nextFirings(
      { cron: '0 7 * * *', timezone: 'Australia/Sydney' },
      { from: new Date('2026-12-23T00:00:00Z'), count: 2, skipDates: new Set(['2026-12-25']) },
    );
    expect(locals(firings, 'Australia/Sydney')).toEqual([
      '2026-12-24T07:00:00+11:00',
      '2026-12-26T07:00:00+11:00',
    ]);
  });

  it('firings come strictly after `from`', () => {
    const next = nextFiring({ cron: '0 20 * * *', timezone: 'UTC' }, new Date('2026-01-01T20:00:00Z'));
    expect(next?.at.toISOString()).toBe('2026-01-02T20:00:00.000Z');
  });

  it('describeInstant gives UTC without milliseconds and the local time with the zone’s offset', () => {
    expect(describeInstant(new Date('2026-03-29T01:00:00.000Z'), 'Europe/Berlin')).toEqual({
      at: '2026-03-29T01:00:00Z',
      local: '2026-03-29T03:00:00+02:00',
    });
    expect(describeInstant(new Date('2026-03-29T01:00:00Z'), 'UTC').local).toBe('2026-03-29T01:00:00+00:00');
  });

  it.each([
    ['0 20 * * 1-5', 'fixed'],
    ['0 8,20 * * *', 'fixed'],
    ['0 9-17 * * *', 'fixed'],
    ['0 0 2 * * *', 'fixed'],
    ['*/15 * * * *', 'interval'],
    ['0 * * * *', 'interval'],
    ['* 2 * * *', 'interval'],
    ['*/30 0 2 * * *', 'interval'],
  ])('%s is a %s job', (cron, kind) => {
    expect(checkCron(cron)).toEqual({ ok: true, kind });
  });

  it.each([
    ['0 20 * *', /expected 5 fields/],
    ['0 0 0 20 * * 1', /expected 5 fields .* found 7/],
    ['61 * * * *', /minute/],
    ['0 0 31 2 *', /never matches/],
    ['@daily', /nicknames/],
  ])('%s is refused', (cron, reason) => {
    const check = checkCron(cron);
    expect(check.ok).toBe(false);
    expect(check.message).toMatch(reason);
  });
});

/** The instant a fixed wall time on a date happens, found by scanning: the first whose wall time is at or past it. */
function oracleFixed(date: string, time: string, timeZone: string): number {
  const target = `${date}T${time}`;
  let instant = Date.parse(`${target}Z`) - 15 * 3_600_000;
  while (wall(instant + 15 * 60_000, timeZone) < target) instant += 15 * 60_000;
  while (wall(instant, timeZone) < target) instant += 60_000;
  return instant;
}

const PROPERTY_ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Australia/Sydney',
  'Asia/Kolkata',
  'America/Nuuk',
  'Australia/Lord_Howe',
];
/** Days around the 2026 transitions of those zones, and a few ordinary ones. */
const PROPERTY_DATES = [
  '2026-03-07',
  '2026-03-08',
  '2026-03-28',
  '2026-03-29',
  '2026-04-04',
  '2026-04-05',
  '2026-06-15',
  '2026-10-03',
  '2026-10-04',
  '2026-10-24',
  '2026-10-25',
  '2026-10-31',
  '2026-11-01',
];

describe('schedules against a brute-force oracle', () => {
  it('a fixed daily time fires once per local date, at that time or, if it does not exist, when it next does', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PROPERTY_ZONES),
        fc.constantFrom(...PROPERTY_DATES),
        fc.integer({ min: 0, max: 23 }),
        fc.constantFrom(0, 15, 30, 45),
        (zone, date, hour, minute) => {
          const cron = `${minute} ${hour} * * *`;
          const firings = firingsOn(cron, zone, date);
          const time = `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00`;
          expect(firings.map((firing) => firing.at.getTime())).toEqual([oracleFixed(date, time, zone)]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('an interval job fires at exactly the instants whose wall-clock time matches', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PROPERTY_ZONES),
        fc.constantFrom(...PROPERTY_DATES),
        fc.constantFrom(10, 15, 20, 30),
        (zone, date, step) => {
          const start = Date.parse(`${date}T00:00:00Z`) - 86_400_000;
          const end = start + 2 * 86_400_000;
          const expected: number[] = [];
          for (let instant = start + 60_000; instant <= end; instant += 60_000) {
            if (Number(wall(instant, zone).slice(14, 16)) % step === 0) expected.push(instant);
          }
          const firings = nextFirings(
            { cron: `*/${step} * * * *`, timezone: zone },
            { from: new Date(start), count: expected.length },
          );
          expect(firings.map((firing) => firing.at.getTime())).toEqual(expected);
        },
      ),
      { numRuns: 12 },
    );
  });
});
