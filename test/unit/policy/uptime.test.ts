import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextFiring } from '../../../src/policy/schedule.js';
import { formatLocal } from '../../../src/policy/timezone.js';
import {
  currentPeriod,
  formatUptime,
  isUp,
  nextEdge,
  parseUptime,
  UPTIME_HORIZON_DAYS,
  type Uptime,
} from '../../../src/policy/uptime.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const NO_SKIP: ReadonlySet<string> = new Set();

function uptime(text: string): Uptime {
  const parsed = parseUptime(text);
  if (!parsed.ok) throw new Error(`test uptime "${text}" is refused: ${parsed.message}`);
  return parsed.uptime;
}

/** The next `count` edges after `from`, as `<local time> up|down`. */
function edges(text: string, zone: string, from: string, count: number, skip = NO_SKIP): string[] {
  const found: string[] = [];
  let after = new Date(from);
  while (found.length < count) {
    const edge = nextEdge(uptime(text), after, zone, skip);
    if (!edge) break;
    found.push(`${formatLocal(edge.at.getTime(), zone)} ${edge.up ? 'up' : 'down'}`);
    after = edge.at;
  }
  return found;
}

function upAt(text: string, zone: string, at: string | number, skip = NO_SKIP): boolean {
  return isUp(uptime(text), new Date(at), zone, skip);
}

describe('parseUptime: the grammar', () => {
  it.each([
    {
      text: 'Mon-Fri 07:30-19:30',
      days: [0, 1, 2, 3, 4],
      start: 450,
      end: 1170,
      canonical: 'Mon-Fri 07:30-19:30',
    },
    { text: 'Wed 08:00-12:00', days: [2], start: 480, end: 720, canonical: 'Wed 08:00-12:00' },
    {
      text: 'Mon,Wed,Fri 08:00-12:00',
      days: [0, 2, 4],
      start: 480,
      end: 720,
      canonical: 'Mon,Wed,Fri 08:00-12:00',
    },
    {
      text: 'Mon-Wed,Fri 08:00-12:00',
      days: [0, 1, 2, 4],
      start: 480,
      end: 720,
      canonical: 'Mon-Wed,Fri 08:00-12:00',
    },
    {
      text: 'Fri-Mon 08:00-12:00',
      days: [0, 4, 5, 6],
      start: 480,
      end: 720,
      canonical: 'Fri-Mon 08:00-12:00',
    },
    { text: 'Sun-Tue 08:00-12:00', days: [0, 1, 6], start: 480, end: 720, canonical: 'Sun-Tue 08:00-12:00' },
    { text: 'Sat,Sun 10:00-14:00', days: [5, 6], start: 600, end: 840, canonical: 'Sat,Sun 10:00-14:00' },
    {
      text: 'Mon-Fri,Wed 08:00-12:00',
      days: [0, 1, 2, 3, 4],
      start: 480,
      end: 720,
      canonical: 'Mon-Fri 08:00-12:00',
    },
    {
      text: 'Mon-Sun 00:00-24:00',
      days: [0, 1, 2, 3, 4, 5, 6],
      start: 0,
      end: 1440,
      canonical: 'Mon-Sun 00:00-24:00',
    },
    { text: 'Sat 08:00-24:00', days: [5], start: 480, end: 1440, canonical: 'Sat 08:00-24:00' },
    // kube-downscaler's own syntax for one day: a range of one day is that day, not the whole week
    { text: 'Sun-Sun 15:30-16:00', days: [6], start: 930, end: 960, canonical: 'Sun 15:30-16:00' },
    { text: 'tue-Tue 08:00-12:00', days: [1], start: 480, end: 720, canonical: 'Tue 08:00-12:00' },
    { text: 'Fri 22:00-02:00', days: [4], start: 1320, end: 1560, canonical: 'Fri 22:00-02:00' },
    { text: 'Fri 22:00-00:00', days: [4], start: 1320, end: 1440, canonical: 'Fri 22:00-24:00' },
    { text: 'Mon 12:00-11:59', days: [0], start: 720, end: 2159, canonical: 'Mon 12:00-11:59' },
    {
      text: 'mon-FRI 07:30-19:30',
      days: [0, 1, 2, 3, 4],
      start: 450,
      end: 1170,
      canonical: 'Mon-Fri 07:30-19:30',
    },
    {
      text: '  Mon-Fri   07:30-19:30 ',
      days: [0, 1, 2, 3, 4],
      start: 450,
      end: 1170,
      canonical: 'Mon-Fri 07:30-19:30',
    },
  ])('"$text" reads as days $days from minute $start to $end, canonically "$canonical"', (case_) => {
    const parsed = parseUptime(case_.text);
    expect(parsed).toEqual({
      ok: true,
      uptime: { specs: [{ days: case_.days, start: case_.start, end: case_.end }] },
    });
    expect(parsed.ok && formatUptime(parsed.uptime)).toBe(case_.canonical);
  });

  it('several specs joined by ", " keep their order', () => {
    const parsed = parseUptime('Mon-Fri 07:30-12:00, Mon-Fri 13:00-19:30, Sat 10:00-14:00');
    expect(parsed.ok && parsed.uptime.specs).toEqual([
      { days: [0, 1, 2, 3, 4], start: 450, end: 720 },
      { days: [0, 1, 2, 3, 4], start: 780, end: 1170 },
      { days: [5], start: 600, end: 840 },
    ]);
    expect(parsed.ok && formatUptime(parsed.uptime)).toBe(
      'Mon-Fri 07:30-12:00, Mon-Fri 13:00-19:30, Sat 10:00-14:00',
    );
  });

  it('a day list that wraps round Sunday is written as one range, Monday first otherwise', () => {
    expect(formatUptime(uptime('Sat,Sun,Mon,Wed 08:00-09:00'))).toBe('Sat-Mon,Wed 08:00-09:00');
    expect(formatUptime(uptime('Sun,Mon 08:00-09:00'))).toBe('Sun,Mon 08:00-09:00');
    expect(formatUptime(uptime('Fri,Mon,Wed 08:00-09:00'))).toBe('Mon,Wed,Fri 08:00-09:00');
  });

  it('the canonical form reads back to the same uptime, for any days and times', () => {
    const spec = fc.record({
      days: fc.subarray([0, 1, 2, 3, 4, 5, 6], { minLength: 1 }),
      start: fc.integer({ min: 0, max: 1439 }),
      length: fc.integer({ min: 1, max: 1439 }),
    });
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 4 }), (specs) => {
        const original: Uptime = {
          specs: specs.map(({ days, start, length }) => ({ days, start, end: start + length })),
        };
        const text = formatUptime(original);
        expect(parseUptime(text)).toEqual({ ok: true, uptime: original });
      }),
      { numRuns: 300 },
    );
  });
});

describe('parseUptime: refusals name the offending part and what was expected', () => {
  const DAYS = '(days are Mon, Tue, Wed, Thu, Fri, Sat, Sun)';
  it.each([
    ['', 'uptime is empty; expected days and a time range like "Mon-Fri 07:30-19:30"'],
    ['   ', 'uptime is empty; expected days and a time range like "Mon-Fri 07:30-19:30"'],
    ['Mnday-Fri 07:30-19:30', `unknown day "Mnday" in "Mnday-Fri 07:30-19:30"; did you mean "Mon"? ${DAYS}`],
    ['Monday 08:00-12:00', `unknown day "Monday" in "Monday 08:00-12:00"; did you mean "Mon"? ${DAYS}`],
    ['Mon-Thurs 08:00-12:00', `unknown day "Thurs" in "Mon-Thurs 08:00-12:00"; did you mean "Thu"? ${DAYS}`],
    [
      'Mon-Fri 08:00-12:00, Sta 10:00-12:00',
      `unknown day "Sta" in "Sta 10:00-12:00"; did you mean "Sat"? ${DAYS}`,
    ],
    ['Weekdays 08:00-12:00', `unknown day "Weekdays" in "Weekdays 08:00-12:00" ${DAYS}`],
    [
      'Mon-Fri 7:30-19:30',
      'expected a time range like 07:30-19:30 after "Mon-Fri", got "7:30-19:30"; write hours with two digits, like 07:30',
    ],
    [
      'Mon-Fri 07:30-9:30',
      'expected a time range like 07:30-19:30 after "Mon-Fri", got "07:30-9:30"; write hours with two digits, like 07:30',
    ],
    ['Mon-Fri 0730-1930', 'expected a time range like 07:30-19:30 after "Mon-Fri", got "0730-1930"'],
    [
      'Mon - Fri 07:30-19:30',
      'expected a time range like 07:30-19:30 after "Mon", got "-"; write day ranges without spaces, like Mon-Fri',
    ],
    ['Mon-Fri', 'expected a time range like 07:30-19:30 after "Mon-Fri", got nothing'],
    [
      'Mon, Wed 08:00-12:00',
      'expected a time range like 07:30-19:30 after "Mon", got nothing; day lists take no spaces ("Mon,Wed 08:00-12:00") and specs are separated by ", "',
    ],
    [
      'Mon-Fri 07:30-12:00 13:00-19:30',
      'unexpected "13:00-19:30" after "Mon-Fri 07:30-12:00"; a spec is days and one time range, like "Mon-Fri 07:30-19:30", and specs are separated by ", "',
    ],
    [
      'Mon-Fri 07:30-12:00,Sat 10:00-12:00',
      'expected ", " (a comma and a space) between specs, got "07:30-12:00,Sat"',
    ],
    ['Mon 08:00-12:00,', '"Mon 08:00-12:00," ends with ","; remove it or add another spec'],
    [
      'Mon 08:00-12:00, , Tue 08:00-12:00',
      'empty spec in "Mon 08:00-12:00, , Tue 08:00-12:00"; specs are separated by ", "',
    ],
    ['07:30-19:30', 'missing days before "07:30-19:30"; expected days first, like "Mon-Fri 07:30-19:30"'],
    [
      'Mon 08:00-12:00, 13:00-14:00 Tue',
      'missing days before "13:00-14:00" in "13:00-14:00 Tue"; expected days first, like "Mon-Fri 07:30-19:30"',
    ],
    ['Mon,,Fri 08:00-12:00', 'empty day in "Mon,,Fri"; list days like Mon,Wed,Fri'],
    ['Mon- 08:00-12:00', 'day range "Mon-" is missing a day; write a range as Mon-Fri'],
    ['Mon-Wed-Fri 08:00-12:00', 'day range "Mon-Wed-Fri" has more than two days; write a range as Mon-Fri'],
    ['Mon 07:60-08:00', 'minutes must be 00-59 in "07:60"'],
    ['Mon 07:00-08:75', 'minutes must be 00-59 in "08:75"'],
    ['Mon 24:00-08:00', '24:00 can only end a range, in "24:00-08:00"; use 00:00 to start at midnight'],
    ['Mon 25:00-08:00', 'hours must be 00-23 in "25:00"'],
    ['Mon 08:00-25:00', 'hours must be 00-23 in "25:00", or the end may be 24:00'],
    ['Mon 08:00-24:30', 'hours must be 00-23 in "24:30", or the end may be 24:00'],
    ['Mon 08:00-08:00', '"08:00-08:00" starts and ends at the same time; use 00:00-24:00 for a whole day'],
    ['Mon 00:00-00:00', '"00:00-00:00" starts and ends at the same time; use 00:00-24:00 for a whole day'],
  ])('%j is refused: %s', (text, message) => {
    expect(parseUptime(text)).toEqual({ ok: false, message });
  });
});

interface TransitionZone {
  readonly zone: string;
  /** Spring forward: a Sunday whose wall time `gapTime` does not exist, and where its gap ends. */
  readonly spring: {
    readonly gapTime: string;
    readonly gapEnd: string;
    readonly start: string;
    readonly nextStart: string;
  };
  /** Fall back: a Sunday whose wall time `repeatedTime` occurs twice. */
  readonly fall: {
    readonly repeatedTime: string;
    readonly first: string;
    readonly second: string;
    readonly fourOClock: string;
    readonly start: string;
    readonly nextStart: string;
  };
  /** The Saturday before the spring-forward Sunday, and the Sunday a week after it. */
  readonly springSaturday: string;
  readonly springSundayAfter: string;
}

const ZONES: readonly TransitionZone[] = [
  {
    zone: 'Europe/Berlin',
    spring: {
      gapTime: '02:30',
      gapEnd: '2026-03-29T03:00:00+02:00',
      start: '2026-03-29T00:00:00+01:00',
      nextStart: '2026-03-30T00:00:00+02:00',
    },
    fall: {
      repeatedTime: '02:30',
      first: '2026-10-25T02:30:00+02:00',
      second: '2026-10-25T02:30:00+01:00',
      fourOClock: '2026-10-25T04:00:00+01:00',
      start: '2026-10-25T00:00:00+02:00',
      nextStart: '2026-10-26T00:00:00+01:00',
    },
    springSaturday: '2026-03-28',
    springSundayAfter: '2026-04-05',
  },
  {
    zone: 'America/New_York',
    spring: {
      gapTime: '02:30',
      gapEnd: '2026-03-08T03:00:00-04:00',
      start: '2026-03-08T00:00:00-05:00',
      nextStart: '2026-03-09T00:00:00-04:00',
    },
    fall: {
      repeatedTime: '01:30',
      first: '2026-11-01T01:30:00-04:00',
      second: '2026-11-01T01:30:00-05:00',
      fourOClock: '2026-11-01T04:00:00-05:00',
      start: '2026-11-01T00:00:00-04:00',
      nextStart: '2026-11-02T00:00:00-05:00',
    },
    springSaturday: '2026-03-07',
    springSundayAfter: '2026-03-15',
  },
];

describe('membership and edges on daylight-saving transition days', () => {
  it.each(ZONES)('$zone: a range starting inside the spring-forward gap starts when the gap ends', (z) => {
    const text = `Sun ${z.spring.gapTime}-06:00`;
    const edge = nextEdge(uptime(text), new Date(`${z.springSaturday}T12:00:00Z`), z.zone);
    expect(edge).toEqual({
      at: new Date(z.spring.gapEnd),
      up: true,
      localDate: z.spring.gapEnd.slice(0, 10),
    });
    expect(upAt(text, z.zone, Date.parse(z.spring.gapEnd) - 1)).toBe(false);
    expect(upAt(text, z.zone, z.spring.gapEnd)).toBe(true);
  });

  it.each(ZONES)(
    '$zone: a fixed-time cron job and a window edge for the gap’s wall time fall on one instant',
    (z) => {
      const [hour, minute] = z.spring.gapTime.split(':');
      const from = new Date(`${z.springSaturday}T12:00:00Z`);
      const firing = nextFiring({ cron: `${Number(minute)} ${Number(hour)} * * 0`, timezone: z.zone }, from);
      expect(nextEdge(uptime(`Sun ${z.spring.gapTime}-06:00`), from, z.zone)?.at).toEqual(firing?.at);
    },
  );

  it.each(ZONES)('$zone: a range ending inside the gap ends when the gap ends', (z) => {
    expect(edges(`Sat 22:00-${z.spring.gapTime}`, z.zone, `${z.springSaturday}T12:00:00Z`, 2)).toEqual([
      `${formatLocal(Date.parse(`${z.springSaturday}T22:00:00${z.spring.start.slice(19)}`), z.zone)} up`,
      `${z.spring.gapEnd} down`,
    ]);
  });

  it.each(ZONES)(
    '$zone: a range lying wholly inside the gap is not up that day, and has no edge there',
    (z) => {
      expect(edges('Sun 02:05-02:55', z.zone, `${z.springSaturday}T12:00:00Z`, 1)[0]).toMatch(
        new RegExp(`^${z.springSundayAfter}T02:05:00[-+]\\d\\d:00 up$`),
      );
    },
  );

  it.each(ZONES)('$zone: two ranges that meet across the gap are one period', (z) => {
    const text = 'Sat 20:00-02:15, Sun 02:45-08:00';
    const saturdayEight = Date.parse(`${z.springSaturday}T20:00:00${z.spring.start.slice(19)}`);
    expect(edges(text, z.zone, `${z.springSaturday}T12:00:00Z`, 2)).toEqual([
      `${formatLocal(saturdayEight, z.zone)} up`,
      `${z.spring.gapEnd.slice(0, 11)}08:00:00${z.spring.gapEnd.slice(19)} down`,
    ]);
    expect(currentPeriod(uptime(text), new Date(z.spring.gapEnd), z.zone)).toEqual({
      up: true,
      since: new Date(saturdayEight),
    });
  });

  it.each(ZONES)(
    '$zone: a whole-day range lasts 23 hours on the spring-forward day and 25 on the fall-back day',
    (z) => {
      const day = uptime('Sun 00:00-24:00');
      for (const [start, end, hours] of [
        [z.spring.start, z.spring.nextStart, 23],
        [z.fall.start, z.fall.nextStart, 25],
      ] as const) {
        const opens = nextEdge(day, new Date(Date.parse(start) - HOUR_MS), z.zone);
        const closes = opens && nextEdge(day, opens.at, z.zone);
        expect(opens).toMatchObject({ at: new Date(start), up: true });
        expect(closes).toMatchObject({ at: new Date(end), up: false, localDate: end.slice(0, 10) });
        expect(((closes?.at.getTime() ?? 0) - (opens?.at.getTime() ?? 0)) / HOUR_MS).toBe(hours);
      }
    },
  );

  it.each(ZONES)(
    '$zone: a range starting in the repeated hour starts at its first occurrence and stays up through the repeat',
    (z) => {
      const text = `Sun ${z.fall.repeatedTime}-04:00`;
      expect(edges(text, z.zone, `${z.fall.start.slice(0, 10)}T00:00:00Z`, 2)).toEqual([
        `${z.fall.first} up`,
        `${z.fall.fourOClock} down`,
      ]);
      // Sample every minute across the night: one rise, one fall, no flicker in the repeated hour.
      const states: boolean[] = [];
      for (let at = Date.parse(z.fall.start); at < Date.parse(z.fall.fourOClock) + HOUR_MS; at += 60_000) {
        states.push(upAt(text, z.zone, at));
      }
      const changes = states.filter((state, index) => index > 0 && state !== states[index - 1]);
      expect(changes).toEqual([true, false]);
      expect(upAt(text, z.zone, z.fall.second)).toBe(true);
    },
  );

  it.each(ZONES)(
    '$zone: a range ending in the repeated hour ends at its first occurrence and stays ended through the repeat',
    (z) => {
      const text = `Sat 22:00-${z.fall.repeatedTime}`;
      const saturday = new Date(Date.parse(z.fall.start) - DAY_MS).toISOString().slice(0, 10);
      const [, down, nextUp] = edges(text, z.zone, `${saturday}T12:00:00Z`, 3);
      expect(down).toBe(`${z.fall.first} down`);
      expect(nextUp).toMatch(/T22:00:00[-+]\d\d:00 up$/);
      expect(upAt(text, z.zone, z.fall.second)).toBe(false);
      expect(upAt(text, z.zone, Date.parse(z.fall.second) - 10 * 60_000)).toBe(false);
    },
  );

  it.each(ZONES)('$zone: edges computed from any instant inside a period agree', (z) => {
    const window = uptime(`Sun ${z.fall.repeatedTime}-04:00`);
    const opened = Date.parse(z.fall.first);
    const closed = Date.parse(z.fall.fourOClock);
    for (let at = opened; at < closed; at += 7 * 60_000) {
      expect(currentPeriod(window, new Date(at), z.zone)).toEqual({ up: true, since: new Date(opened) });
      expect(nextEdge(window, new Date(at), z.zone)?.at).toEqual(new Date(closed));
    }
  });

  it('America/Nuuk springs forward at 23:00: a range ending in that gap meets one starting at midnight', () => {
    expect(edges('Sat 20:00-23:30, Sun 00:00-02:00', 'America/Nuuk', '2026-03-28T12:00:00Z', 2)).toEqual([
      '2026-03-28T20:00:00-02:00 up',
      '2026-03-29T02:00:00-01:00 down',
    ]);
  });
});

describe('merging and week and year boundaries', () => {
  it('adjacent ranges merge: Mon 08:00-24:00 and Tue 00:00-08:00 are one period', () => {
    expect(edges('Mon 08:00-24:00, Tue 00:00-08:00', 'Europe/Berlin', '2026-06-07T00:00:00Z', 2)).toEqual([
      '2026-06-08T08:00:00+02:00 up',
      '2026-06-09T08:00:00+02:00 down',
    ]);
  });

  it('overlapping ranges merge into one period', () => {
    expect(edges('Wed 08:00-12:00, Wed 11:00-18:00', 'Europe/Berlin', '2026-06-09T00:00:00Z', 2)).toEqual([
      '2026-06-10T08:00:00+02:00 up',
      '2026-06-10T18:00:00+02:00 down',
    ]);
  });

  it('a range crossing midnight from Sunday ends on Monday', () => {
    expect(edges('Sun 22:00-02:00', 'America/New_York', '2026-06-06T00:00:00Z', 2)).toEqual([
      '2026-06-07T22:00:00-04:00 up',
      '2026-06-08T02:00:00-04:00 down',
    ]);
    expect(
      nextEdge(uptime('Sun 22:00-02:00'), new Date('2026-06-08T03:00:00Z'), 'America/New_York')?.localDate,
    ).toBe('2026-06-08');
  });

  it('a day range wrapping round the week (Fri-Mon) is up on Fri, Sat, Sun and Mon', () => {
    expect(edges('Fri-Mon 20:00-23:00', 'Europe/Berlin', '2026-06-08T00:00:00Z', 8)).toEqual([
      '2026-06-08T20:00:00+02:00 up',
      '2026-06-08T23:00:00+02:00 down',
      '2026-06-12T20:00:00+02:00 up',
      '2026-06-12T23:00:00+02:00 down',
      '2026-06-13T20:00:00+02:00 up',
      '2026-06-13T23:00:00+02:00 down',
      '2026-06-14T20:00:00+02:00 up',
      '2026-06-14T23:00:00+02:00 down',
    ]);
  });

  it('a one-day range (Sun-Sun) is up on Sundays only, from its start included to its end excluded', () => {
    expect(edges('Sun-Sun 15:30-16:00', 'UTC', '2026-11-23T00:00:00Z', 4)).toEqual([
      '2026-11-29T15:30:00+00:00 up',
      '2026-11-29T16:00:00+00:00 down',
      '2026-12-06T15:30:00+00:00 up',
      '2026-12-06T16:00:00+00:00 down',
    ]);
    expect(upAt('Sun-Sun 15:30-16:00', 'UTC', '2026-11-29T15:29:59.999Z')).toBe(false);
    expect(upAt('Sun-Sun 15:30-16:00', 'UTC', '2026-11-29T15:30:00.000Z')).toBe(true);
    expect(upAt('Sun-Sun 15:30-16:00', 'UTC', '2026-11-29T15:59:59.999Z')).toBe(true);
    expect(upAt('Sun-Sun 15:30-16:00', 'UTC', '2026-11-29T16:00:00.000Z')).toBe(false);
  });

  it('a range crossing midnight on New Year’s Eve ends in the new year, on its local date', () => {
    const window = uptime('Thu 22:00-02:00');
    const opens = nextEdge(window, new Date('2026-12-31T12:00:00Z'), 'Europe/Berlin');
    const closes = opens && nextEdge(window, opens.at, 'Europe/Berlin');
    expect(opens).toEqual({ at: new Date('2026-12-31T22:00:00+01:00'), up: true, localDate: '2026-12-31' });
    expect(closes).toEqual({ at: new Date('2027-01-01T02:00:00+01:00'), up: false, localDate: '2027-01-01' });
    expect(isUp(window, new Date('2027-01-01T00:30:00+01:00'), 'Europe/Berlin')).toBe(true);
  });

  it('an end at 24:00 is dated the next day, when it happens', () => {
    expect(nextEdge(uptime('Fri 22:00-24:00'), new Date('2026-06-12T23:00:00Z'), 'UTC')).toEqual({
      at: new Date('2026-06-13T00:00:00Z'),
      up: false,
      localDate: '2026-06-13',
    });
  });
});

describe('calendars: skipped days are entirely outside uptime', () => {
  const OFFICE = 'Mon-Fri 07:30-19:30';

  it('a holiday inside Mon-Fri removes the whole day; nextEdge jumps over it', () => {
    const skip = new Set(['2026-12-24']);
    expect(upAt(OFFICE, 'Europe/Berlin', '2026-12-24T10:00:00+01:00', skip)).toBe(false);
    expect(edges(OFFICE, 'Europe/Berlin', '2026-12-23T12:00:00Z', 2, skip)).toEqual([
      '2026-12-23T19:30:00+01:00 down',
      '2026-12-25T07:30:00+01:00 up',
    ]);
    expect(
      currentPeriod(uptime(OFFICE), new Date('2026-12-24T10:00:00+01:00'), 'Europe/Berlin', skip),
    ).toEqual({
      up: false,
      since: new Date('2026-12-23T19:30:00+01:00'),
    });
  });

  it('consecutive holidays are skipped together, up to the next working day', () => {
    const skip = new Set(['2026-12-24', '2026-12-25']);
    expect(edges(OFFICE, 'America/New_York', '2026-12-23T17:00:00Z', 2, skip)).toEqual([
      '2026-12-23T19:30:00-05:00 down',
      '2026-12-28T07:30:00-05:00 up',
    ]);
  });

  it('a holiday on a weekend changes nothing', () => {
    const weekend = new Set(['2026-12-19', '2026-12-20']);
    expect(edges(OFFICE, 'Europe/Berlin', '2026-12-14T00:00:00Z', 20, weekend)).toEqual(
      edges(OFFICE, 'Europe/Berlin', '2026-12-14T00:00:00Z', 20),
    );
  });

  it('a holiday removes the after-midnight tail of a range begun the evening before, and keeps its own tail', () => {
    // Tuesday 2026-12-22 is a holiday: Monday's night shift stops at midnight, Tuesday's starts at
    // midnight on Wednesday.
    const skip = new Set(['2026-12-22']);
    expect(edges('Mon-Fri 22:00-06:00', 'Europe/Berlin', '2026-12-21T12:00:00Z', 5, skip)).toEqual([
      '2026-12-21T22:00:00+01:00 up',
      '2026-12-22T00:00:00+01:00 down',
      '2026-12-23T00:00:00+01:00 up',
      '2026-12-23T06:00:00+01:00 down',
      '2026-12-23T22:00:00+01:00 up',
    ]);
  });

  it('a holiday on the fall-back day in an always-up window is off for all of its 25 hours', () => {
    const skip = new Set(['2026-11-01']);
    const always = uptime('Mon-Sun 00:00-24:00');
    const off = nextEdge(always, new Date('2026-10-30T00:00:00Z'), 'America/New_York', skip);
    const on = off && nextEdge(always, off.at, 'America/New_York', skip);
    expect(off).toEqual({ at: new Date('2026-11-01T00:00:00-04:00'), up: false, localDate: '2026-11-01' });
    expect(on).toEqual({ at: new Date('2026-11-02T00:00:00-05:00'), up: true, localDate: '2026-11-02' });
    expect(on && nextEdge(always, on.at, 'America/New_York', skip)).toBeUndefined();
  });
});

describe('windows that never change', () => {
  it('an always-up window has no edge and no start', () => {
    for (const text of [
      'Mon-Sun 00:00-24:00',
      'Mon-Sun 08:00-24:00, Mon-Sun 00:00-08:00',
      'Mon-Sun 12:00-13:00, Mon-Sun 13:00-12:00',
    ]) {
      const window = uptime(text);
      const at = new Date('2026-03-29T01:30:00Z');
      expect(isUp(window, at, 'Europe/Berlin')).toBe(true);
      expect(nextEdge(window, at, 'Europe/Berlin')).toBeUndefined();
      expect(currentPeriod(window, at, 'Europe/Berlin')).toEqual({ up: true, since: undefined });
    }
  });

  it('a window whose every day is skipped is never up, and has no edge or start', () => {
    const skip = new Set<string>();
    for (let day = Date.parse('2025-01-01'); day <= Date.parse('2028-12-31'); day += DAY_MS) {
      skip.add(new Date(day).toISOString().slice(0, 10));
    }
    const window = uptime('Mon-Fri 07:30-19:30');
    const at = new Date('2027-01-04T10:00:00+01:00');
    expect(isUp(window, at, 'Europe/Berlin', skip)).toBe(false);
    expect(nextEdge(window, at, 'Europe/Berlin', skip)).toBeUndefined();
    expect(currentPeriod(window, at, 'Europe/Berlin', skip)).toEqual({ up: false, since: undefined });
  });

  it(`nextEdge looks ${UPTIME_HORIZON_DAYS} days ahead and no further`, () => {
    const always = uptime('Mon-Sun 00:00-24:00');
    const skip = new Set(['2027-12-31']);
    const within = new Date(Date.parse('2027-12-31T00:00:00Z') - (UPTIME_HORIZON_DAYS - 5) * DAY_MS);
    const beyond = new Date(Date.parse('2027-12-31T00:00:00Z') - (UPTIME_HORIZON_DAYS + 25) * DAY_MS);
    expect(nextEdge(always, within, 'UTC', skip)?.at).toEqual(new Date('2027-12-31T00:00:00Z'));
    expect(nextEdge(always, beyond, 'UTC', skip)).toBeUndefined();
    const after = new Date(Date.parse('2028-01-01T00:00:00Z') + (UPTIME_HORIZON_DAYS - 5) * DAY_MS);
    const longAfter = new Date(Date.parse('2028-01-01T00:00:00Z') + (UPTIME_HORIZON_DAYS + 25) * DAY_MS);
    expect(currentPeriod(always, after, 'UTC', skip).since).toEqual(new Date('2028-01-01T00:00:00Z'));
    expect(currentPeriod(always, longAfter, 'UTC', skip)).toEqual({ up: true, since: undefined });
  });
});

describe('isUp, currentPeriod and nextEdge agree at any instant', () => {
  const WINDOWS = [
    'Mon-Fri 07:30-19:30',
    'Sun 02:30-06:00, Sat 22:00-01:30, Fri-Mon 23:00-02:45',
    'Sat 20:00-02:15, Sun 02:45-08:00, Wed 12:00-11:00',
  ];
  const SKIPS = [NO_SKIP, new Set(['2026-03-08', '2026-03-29', '2026-10-26', '2026-11-02', '2026-12-24'])];
  const TRANSITIONS = [
    '2026-03-08T07:00:00Z',
    '2026-03-29T01:00:00Z',
    '2026-10-25T01:00:00Z',
    '2026-11-01T06:00:00Z',
  ];
  const YEAR_START = Date.parse('2026-01-01T00:00:00Z');
  const instant = fc.oneof(
    fc.integer({ min: YEAR_START, max: YEAR_START + 365 * DAY_MS }),
    fc
      .tuple(fc.constantFrom(...TRANSITIONS), fc.integer({ min: -2 * DAY_MS, max: 2 * DAY_MS }))
      .map(([transition, offset]) => Date.parse(transition) + offset),
  );

  it('for random instants: the state, the start of its period and the next edge are consistent', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...WINDOWS),
        fc.constantFrom('Europe/Berlin', 'America/New_York'),
        fc.constantFrom(...SKIPS),
        instant,
        (text, zone, skip, at) => {
          const window = uptime(text);
          const up = isUp(window, new Date(at), zone, skip);
          const period = currentPeriod(window, new Date(at), zone, skip);
          expect(period.up).toBe(up);
          expect(period.since).toBeDefined();
          const since = period.since?.getTime() ?? 0;
          expect(since).toBeLessThanOrEqual(at);
          expect(nextEdge(window, new Date(since - 1), zone, skip)).toMatchObject({
            at: new Date(since),
            up,
          });
          const next = nextEdge(window, new Date(at), zone, skip);
          expect(next).toBeDefined();
          const nextAt = next?.at.getTime() ?? 0;
          expect(nextAt).toBeGreaterThan(at);
          expect(next?.up).toBe(!up);
          expect(isUp(window, new Date(nextAt - 1), zone, skip)).toBe(up);
          expect(isUp(window, new Date(nextAt), zone, skip)).toBe(!up);
          expect(currentPeriod(window, new Date(nextAt - 1), zone, skip).since).toEqual(period.since);
        },
      ),
      { numRuns: 400 },
    );
  });
});
