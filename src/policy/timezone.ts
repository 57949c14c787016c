import { didYouMean } from './suggest.js';

const formatters = new Map<string, Intl.DateTimeFormat>();
const validity = new Map<string, boolean>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let cached = formatters.get(timeZone);
  if (!cached) {
    cached = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, cached);
  }
  return cached;
}

/**
 * Whether the runtime knows an IANA time zone name. The name is kept as written: ICU would
 * "canonicalize" Asia/Kolkata to Asia/Calcutta. UTC offsets such as `+02:00` are refused: they
 * ignore daylight saving time, which is exactly what a schedule must follow.
 */
export function isTimeZone(name: string): boolean {
  let known = validity.get(name);
  if (known === undefined) {
    known = /^[A-Za-z]/.test(name);
    if (known) {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: name });
      } catch {
        known = false;
      }
    }
    validity.set(name, known);
  }
  return known;
}

/**
 * tzdata's zones named after a US time of day rather than a place. EST and MST are fixed offsets
 * without daylight saving time (the time of Panama and of Arizona all year): a "Mon-Fri
 * 07:30-19:30" in EST starts at 08:30 New York time in July. They are refused, as `+02:00` is,
 * naming the zone probably meant and the one that keeps the offset all year.
 */
const FIXED_US_TIMES: Readonly<Record<string, { offset: string; meant: string; allYear: string }>> = {
  EST: { offset: '-05:00', meant: 'America/New_York', allYear: 'America/Panama' },
  MST: { offset: '-07:00', meant: 'America/Denver', allYear: 'America/Phoenix' },
};

/**
 * The other such names follow the rules of one place (Hawaii keeps no daylight saving time, the
 * POSIX-style names follow US rules): read as that place's zone, with a warning naming it.
 */
const US_TIME_PLACES: Readonly<Record<string, string>> = {
  HST: 'Pacific/Honolulu',
  EST5EDT: 'America/New_York',
  CST6CDT: 'America/Chicago',
  MST7MDT: 'America/Denver',
  PST8PDT: 'America/Los_Angeles',
};

/** `Etc/GMT+5` and the like, in any case: UTC offsets by another name, with their sign inverted. */
const ETC_OFFSET = /^etc\/gmt([+-])(\d{1,2})$/i;

/**
 * Why a zone the runtime knows cannot be used: it is a fixed UTC offset that a person would expect
 * to follow daylight saving time (EST, MST, `Etc/GMT+5`). Undefined for any other zone.
 */
export function fixedOffsetRefusal(name: string): string | undefined {
  // every job asks: a zone of a place (Europe/Berlin) is answered without building anything
  if (name.length > 3 && !/^etc\//i.test(name)) return undefined;
  const us = FIXED_US_TIMES[name.toUpperCase()];
  if (us)
    return `is UTC${us.offset} all year, without daylight saving time (in summer an hour behind ${us.meant}); did you mean "${us.meant}"? ("${us.allYear}" keeps ${us.offset} all year)`;
  const etc = ETC_OFFSET.exec(name);
  if (!etc || Number(etc[2]) === 0) return undefined;
  // POSIX signs: Etc/GMT+5 is five hours behind UTC
  const offset = `${etc[1] === '+' ? '-' : '+'}${pad(Number(etc[2]))}:00`;
  return `is UTC${offset} all year, without daylight saving time (the Etc/GMT signs are inverted); expected the IANA zone of a place, such as America/New_York, or UTC`;
}

let knownZones: readonly string[] | undefined;
let zonesByLowerCase: ReadonlyMap<string, string> | undefined;

/** A known zone name close to a misspelt one, for `did you mean`. */
export function suggestTimeZone(name: string): string | undefined {
  knownZones ??= Intl.supportedValuesOf('timeZone');
  return didYouMean(name, knownZones);
}

/**
 * The IANA spelling of a zone the runtime knows in any case: `Europe/Berlin` for `europe/berlin`,
 * or `name` itself when it is spelt so already (or is an alias spelt with capitals, such as
 * `Asia/Kolkata`, which is kept). A name in lower case only that is no zone's but an alias's
 * (`us/eastern`) becomes the zone ICU names for it (`America/New_York`). Undefined for an unknown
 * zone. The runtime reads zone names in any case, but what `next`, logs and the dashboard show
 * should be the name people search for. A US time name that follows one place's rules (`HST`,
 * `EST5EDT`) becomes that place's zone.
 */
export function canonicalTimeZone(name: string): string | undefined {
  // every job of a policy asks, of a few zones
  if (canonical.has(name)) return canonical.get(name);
  const answer = canonicalOnce(name);
  if (canonical.size >= 1000) canonical.clear();
  canonical.set(name, answer);
  return answer;
}

const canonical = new Map<string, string | undefined>();

function canonicalOnce(name: string): string | undefined {
  if (!isTimeZone(name)) return undefined;
  const place = US_TIME_PLACES[name.toUpperCase()];
  if (place !== undefined) return place;
  zonesByLowerCase ??= new Map(
    [...Intl.supportedValuesOf('timeZone'), 'UTC'].map((zone) => [zone.toLowerCase(), zone]),
  );
  const known = zonesByLowerCase.get(name.toLowerCase());
  if (known !== undefined) return known;
  if (/[A-Z]/.test(name)) return name;
  return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
}

/** Milliseconds to add to a UTC instant to get the wall-clock time in `timeZone`. */
export function offsetAt(instantMs: number, timeZone: string): number {
  const second = Math.floor(instantMs / 1000) * 1000;
  return wallClockMs(second, timeZone) - second;
}

/**
 * Every name tzdata gives UTC. Their wall clock is the instant itself, answered without ICU: its
 * first zone formatter maps about 5 MB of zone and locale data and ICU's code, 8 MB of a
 * process's memory, which a scheduler of UTC jobs then never needs.
 */
const UTC_NAMES: ReadonlySet<string> = new Set(
  ['UTC', 'UCT', 'Universal', 'Zulu', 'GMT', 'GMT0', 'GMT+0', 'GMT-0', 'Greenwich'].flatMap((name) => [
    name,
    `Etc/${name}`,
  ]),
);

/** The wall-clock time in `timeZone` at an instant, encoded as if it were a UTC instant. */
export function wallClockMs(instantMs: number, timeZone: string): number {
  if (UTC_NAMES.has(timeZone)) return instantMs;
  const parts = formatter(timeZone).formatToParts(instantMs);
  const field = (type: Intl.DateTimeFormatPartTypes) =>
    Number(parts.find((part) => part.type === type)?.value);
  const wall = Date.UTC(
    field('year'),
    field('month') - 1,
    field('day'),
    field('hour'),
    field('minute'),
    field('second'),
  );
  return wall + (instantMs - Math.floor(instantMs / 1000) * 1000);
}

function pad(value: number, width = 2): string {
  return String(Math.abs(value)).padStart(width, '0');
}

/** `±HH:MM` for an offset in milliseconds. */
export function formatOffset(offsetMs: number): string {
  const minutes = Math.round(offsetMs / 60_000);
  const sign = minutes < 0 ? '-' : '+';
  return `${sign}${pad(Math.trunc(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** An instant as ISO 8601 wall-clock time with its offset: `2026-03-29T03:00:00+02:00`. */
export function formatLocal(instantMs: number, timeZone: string): string {
  const offset = offsetAt(instantMs, timeZone);
  const wall = new Date(Math.floor(instantMs / 1000) * 1000 + offset).toISOString().slice(0, 19);
  return `${wall}${formatOffset(offset)}`;
}

/** An instant as ISO 8601 UTC without milliseconds: `2026-03-29T01:00:00Z`. */
export function formatUtc(instantMs: number): string {
  return `${new Date(Math.floor(instantMs / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}
