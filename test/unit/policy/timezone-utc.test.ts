import { afterEach, describe, expect, it, vi } from 'vitest';
import { offsetAt, wallClockMs } from '../../../src/policy/timezone.js';

/** ICU's offset of a zone at an instant, in milliseconds, asked directly. */
function icuOffsetMs(instantMs: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(instantMs);
  const field = (type: Intl.DateTimeFormatPartTypes) =>
    Number(parts.find((part) => part.type === type)?.value);
  const second = Math.floor(instantMs / 1000) * 1000;
  return (
    Date.UTC(
      field('year'),
      field('month') - 1,
      field('day'),
      field('hour'),
      field('minute'),
      field('second'),
    ) - second
  );
}

const UTC_SPELLINGS = [
  'UTC',
  'UCT',
  'Universal',
  'Zulu',
  'GMT',
  'GMT0',
  'GMT+0',
  'GMT-0',
  'Greenwich',
].flatMap((name) => [name, `Etc/${name}`]);
const INSTANTS = [
  Date.UTC(2026, 2, 29, 1, 30, 0, 250),
  Date.UTC(2026, 9, 25, 0, 59, 59, 999),
  Date.UTC(1999, 11, 31, 23, 0),
];

describe('UTC under any of its tzdata names', () => {
  afterEach(() => vi.restoreAllMocks());

  it('has the wall clock of the instant itself, as ICU says, without building a zone formatter', () => {
    for (const zone of UTC_SPELLINGS)
      for (const instant of INSTANTS) expect(icuOffsetMs(instant, zone), `${zone} per ICU`).toBe(0);
    const formatters = vi.spyOn(Intl, 'DateTimeFormat');
    for (const zone of UTC_SPELLINGS)
      for (const instant of INSTANTS) {
        expect(wallClockMs(instant, zone), zone).toBe(instant);
        expect(offsetAt(instant, zone), zone).toBe(0);
      }
    expect(formatters).not.toHaveBeenCalled();
  });

  it('a zone of a place still asks ICU, and gets its offset (Europe/London is UTC in winter only)', () => {
    const formatters = vi.spyOn(Intl, 'DateTimeFormat');
    expect(offsetAt(Date.UTC(2026, 0, 15), 'Europe/London')).toBe(0);
    expect(offsetAt(Date.UTC(2026, 6, 15), 'Europe/London')).toBe(3_600_000);
    expect(formatters).toHaveBeenCalled();
  });
});
