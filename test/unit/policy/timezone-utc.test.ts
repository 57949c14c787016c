import { afterEach, describe, expect, it, vi } from 'vitest';
import { offsetAt, wallClockMs } from '../../../src/policy/timezone.js';

/** ICU's name for a zone's offset at an instant: `GMT+01:00` and the like (`GMT` or `GMT+00:00` for none). */
function icuOffsetName(instantMs: number, timeZone: string): string | undefined {
  return new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
    .formatToParts(instantMs)
    .find((part) => part.type === 'timeZoneName')?.value;
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
      for (const instant of INSTANTS)
        expect(icuOffsetName(instant, zone), `${zone} per ICU`).toMatch(/^GMT(\+00:00)?$/);
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
    expect(icuOffsetName(Date.UTC(2026, 6, 15), 'Europe/London')).toBe('GMT+01:00');
    expect(formatters).toHaveBeenCalled();
  });
});
