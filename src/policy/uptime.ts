import { wallTimeInstant } from './schedule.js';
import { didYouMean } from './suggest.js';
import { wallClockMs } from './timezone.js';

/**
 * The `uptime` of a window: when, in local time, the window keeps its workspaces running.
 *
 * Text form: one or more specs joined by ", ". A spec is `<days> <HH:MM>-<HH:MM>`:
 * - days are `Mon`..`Sun` in any letter case (written `Mon` in the canonical form), ranges `Mon-Fri`
 *   (a range may wrap round the week: `Fri-Mon` is Fri, Sat, Sun, Mon; `Sun-Sun` is Sunday alone),
 *   lists `Mon,Wed,Fri` and mixes `Mon-Wed,Fri`, without spaces;
 * - times have two-digit hours and minutes; a start is 00:00..23:59, an end 00:00..24:00 (24:00 is
 *   the end of the day). An end at or before the start crosses midnight: `Fri 22:00-02:00` runs from
 *   Friday 22:00 to Saturday 02:00. A range that starts and ends at the same time is refused.
 *
 * Membership is defined by instants (see isUp), so daylight saving time never makes it flicker.
 */
export interface Uptime {
  readonly specs: readonly UptimeSpec[];
}

/** One `<days> <HH:MM>-<HH:MM>` spec. */
export interface UptimeSpec {
  /** The days the range starts on, Monday first: 0 = Mon … 6 = Sun, sorted, without repeats. */
  readonly days: readonly number[];
  /** Minutes after the start day's local midnight at which the range starts: 0..1439. */
  readonly start: number;
  /**
   * Minutes after the start day's local midnight at which the range ends: start+1..start+1439.
   * Above 1440 the range ends on the next day; 1440 is midnight (written 24:00).
   */
  readonly end: number;
}

export type UptimeParse =
  | { readonly ok: true; readonly uptime: Uptime }
  | { readonly ok: false; readonly message: string };

/** A change of membership: from `at` on, the window is `up` (or not). */
export interface UptimeEdge {
  readonly at: Date;
  readonly up: boolean;
  /**
   * The local date (`YYYY-MM-DD`) of the wall-clock time the edge stands for, like Firing's
   * localDate: a start on the day it starts, an end on the day it ends (24:00 counts as the next
   * day's 00:00); a skipped day that cuts a period dates its edge with its own date, and the edge
   * where the period resumes with the date after it.
   */
  readonly localDate: string;
}

/** The state at an instant and the edge that began it. */
export interface UptimePeriod {
  readonly up: boolean;
  /** The instant of the edge that began this state; undefined when there is none within UPTIME_HORIZON_DAYS back. */
  readonly since: Date | undefined;
}

/**
 * How far nextEdge looks forward and currentPeriod looks back, in local days. Beyond it a window
 * counts as never changing: "Mon-Sun 00:00-24:00" without a calendar has no edge at all.
 */
export const UPTIME_HORIZON_DAYS = 400;

const DAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
const FULL_DAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const DAYS_LIST = `(days are ${DAY_NAMES.join(', ')})`;
const EXAMPLE = '"Mon-Fri 07:30-19:30"';
const MINUTE_MS = 60_000;
const DAY_MINUTES = 1440;
const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------
// Parsing and the canonical form

/** Parses the text of an `uptime`; a refusal names the offending part and what was expected. */
export function parseUptime(text: string): UptimeParse {
  const trimmed = text.trim();
  if (trimmed === '') return refuse(`uptime is empty; expected days and a time range like ${EXAMPLE}`);
  if (trimmed.endsWith(',')) return refuse(`"${trimmed}" ends with ","; remove it or add another spec`);
  const parts = trimmed.split(/,\s+/).map((part) => part.trim());
  const specs: UptimeSpec[] = [];
  for (const [index, part] of parts.entries()) {
    if (part === '') return refuse(`empty spec in "${trimmed}"; specs are separated by ", "`);
    const spec = parseSpec(part, parts[index + 1]);
    if (typeof spec === 'string') return refuse(spec);
    specs.push(spec);
  }
  return { ok: true, uptime: { specs } };
}

function refuse(message: string): UptimeParse {
  return { ok: false, message };
}

function parseSpec(spec: string, nextSpec: string | undefined): UptimeSpec | string {
  const [daysText = '', rangeText, ...rest] = spec.split(/\s+/);
  if (/^\d/.test(daysText)) {
    const where = daysText === spec ? '' : ` in "${spec}"`;
    return `missing days before "${daysText}"${where}; expected days first, like ${EXAMPLE}`;
  }
  const days = parseDays(daysText, spec);
  if (typeof days === 'string') return days;
  if (rangeText === undefined) {
    const hint =
      nextSpec !== undefined && /^[A-Za-z]/.test(nextSpec)
        ? `; day lists take no spaces ("Mon,Wed 08:00-12:00") and specs are separated by ", "`
        : '';
    return `expected a time range like 07:30-19:30 after "${daysText}", got nothing${hint}`;
  }
  const range = parseRange(rangeText, daysText);
  if (typeof range === 'string') return range;
  if (rest.length > 0) {
    return `unexpected "${rest.join(' ')}" after "${daysText} ${rangeText}"; a spec is days and one time range, like ${EXAMPLE}, and specs are separated by ", "`;
  }
  return { days, ...range };
}

function parseDays(text: string, spec: string): number[] | string {
  const days = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') return `empty day in "${text}"; list days like Mon,Wed,Fri`;
    const ends = item.split('-');
    if (ends.length > 2) return `day range "${item}" has more than two days; write a range as Mon-Fri`;
    const indexes: number[] = [];
    for (const name of ends) {
      if (name === '') return `day range "${item}" is missing a day; write a range as Mon-Fri`;
      const index = DAY_NAMES.findIndex((day) => day.toLowerCase() === name.toLowerCase());
      if (index === -1) {
        const suggestion = suggestDay(name);
        const hint = suggestion === undefined ? '' : `; did you mean "${suggestion}"?`;
        return `unknown day "${name}" in "${spec}"${hint} ${DAYS_LIST}`;
      }
      indexes.push(index);
    }
    // `Sun-Sun` is Sunday alone, as in kube-downscaler's uptime: a range never wraps a whole week
    const [first = 0, last = first] = indexes;
    for (let day = first; ; day = (day + 1) % 7) {
      days.add(day);
      if (day === last) break;
    }
  }
  return [...days].sort((a, b) => a - b);
}

/** A day a misspelt or spelt-out name was probably meant as: `Monday`, `Tues`, `Mnday` and `Sta` mean a day. */
function suggestDay(name: string): string | undefined {
  const lowered = name.toLowerCase();
  const byPrefix = FULL_DAY_NAMES.findIndex((full) => lowered.length >= 3 && full.startsWith(lowered));
  if (byPrefix !== -1) return DAY_NAMES[byPrefix];
  // Swapped letters cost two edits, too many for didYouMean on three-letter names.
  const letters = (text: string) => [...text.toLowerCase()].sort().join('');
  const anagram = DAY_NAMES.find((day) => letters(day) === letters(name));
  if (anagram !== undefined) return anagram;
  const abbreviation = didYouMean(name, DAY_NAMES);
  if (abbreviation !== undefined) return abbreviation;
  const full = didYouMean(name, FULL_DAY_NAMES);
  return full === undefined ? undefined : DAY_NAMES[FULL_DAY_NAMES.indexOf(full)];
}

function parseRange(text: string, daysText: string): { start: number; end: number } | string {
  const match = /^(\d\d):(\d\d)-(\d\d):(\d\d)$/.exec(text);
  if (!match) {
    if (/^\d\d:\d\d-\d\d:\d\d,/.test(text)) {
      return `expected ", " (a comma and a space) between specs, got "${text}"`;
    }
    const hint = /(^|-)\d:/.test(text)
      ? '; write hours with two digits, like 07:30'
      : /^[-A-Za-z]/.test(text)
        ? '; write day ranges without spaces, like Mon-Fri'
        : '';
    return `expected a time range like 07:30-19:30 after "${daysText}", got "${text}"${hint}`;
  }
  const [, startHours, startMinutes, endHours, endMinutes] = match.map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const [startText, endText] = text.split('-') as [string, string];
  if (startMinutes > 59) return `minutes must be 00-59 in "${startText}"`;
  if (endMinutes > 59) return `minutes must be 00-59 in "${endText}"`;
  if (startHours === 24 && startMinutes === 0) {
    return `24:00 can only end a range, in "${text}"; use 00:00 to start at midnight`;
  }
  if (startHours > 23) return `hours must be 00-23 in "${startText}"`;
  if (endHours > 24 || (endHours === 24 && endMinutes > 0)) {
    return `hours must be 00-23 in "${endText}", or the end may be 24:00`;
  }
  const start = startHours * 60 + startMinutes;
  const end = endHours * 60 + endMinutes;
  if (start === end) {
    return `"${text}" starts and ends at the same time; use 00:00-24:00 for a whole day`;
  }
  return { start, end: end > start ? end : end + DAY_MINUTES };
}

/**
 * The canonical text of an uptime: specs in their order, days Monday first with runs of three or
 * more as ranges (a run round the weekend stays one range: `Fri-Mon`), an end at midnight as 24:00.
 * parseUptime reads it back to the same Uptime.
 */
export function formatUptime(uptime: Uptime): string {
  return uptime.specs
    .map((spec) => `${formatDays(spec.days)} ${formatMinutes(spec.start)}-${formatMinutes(spec.end)}`)
    .join(', ');
}

function formatDays(days: readonly number[]): string {
  if (days.length === 7) return 'Mon-Sun';
  const has = new Set(days);
  // Start at Monday, or at the start of the run Monday belongs to when that run wraps from Sunday.
  let first = 0;
  while (has.has(first) && has.has((first + 6) % 7)) first = (first + 6) % 7;
  const items: string[] = [];
  for (let offset = 0; offset < 7; ) {
    const day = (first + offset) % 7;
    if (!has.has(day)) {
      offset += 1;
      continue;
    }
    let length = 1;
    while (offset + length < 7 && has.has((day + length) % 7)) length += 1;
    const names = Array.from({ length }, (_, step) => DAY_NAMES[(day + step) % 7] as string);
    items.push(length >= 3 ? `${names[0]}-${names[length - 1]}` : names.join(','));
    offset += length;
  }
  return items.join(',');
}

function formatMinutes(minutes: number): string {
  const inDay = minutes > DAY_MINUTES ? minutes - DAY_MINUTES : minutes;
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(Math.floor(inDay / 60))}:${pad(inDay % 60)}`;
}

// ---------------------------------------------------------------------------------------------
// Membership and edges
//
// Local time is handled as "wall" milliseconds: a wall-clock time encoded as if it were UTC, and a
// local day as a day number (wall ms / DAY_MS). The uptime is first merged in wall time, then only
// the boundaries of the merged spans are turned into instants by the fixed-time rule
// (wallTimeInstant). That rule is monotone, so this gives the same set of instants as turning every
// spec interval into instants and merging those; spans that shrink to nothing in a spring-forward
// gap, or meet across one, are cancelled or joined afterwards (collapse).

interface WallSpan {
  readonly start: number;
  readonly end: number;
}

interface WallEdge {
  readonly at: number;
  readonly up: boolean;
  readonly wall: number;
}

const instantCache = new Map<string, Map<number, number>>();
let cachedInstants = 0;
const MAX_CACHED_INSTANTS = 100_000;

/** wallTimeInstant, remembered: the scheduler and the reconciler ask for the same few edges again and again. */
function instantOf(wall: number, timeZone: string): number {
  let zone = instantCache.get(timeZone);
  if (!zone) {
    zone = new Map();
    instantCache.set(timeZone, zone);
  }
  let instant = zone.get(wall);
  if (instant === undefined) {
    instant = wallTimeInstant(wall, timeZone);
    if (cachedInstants >= MAX_CACHED_INSTANTS) {
      instantCache.clear();
      cachedInstants = 0;
      zone = new Map();
      instantCache.set(timeZone, zone);
    }
    zone.set(wall, instant);
    cachedInstants += 1;
  }
  return instant;
}

function isoDate(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

function weekday(day: number): number {
  // Day 0, 1970-01-01, was a Thursday (3 when Monday is 0).
  return (((day + 3) % 7) + 7) % 7;
}

/**
 * The uptime in wall time from the specs starting on days `firstDay`..`lastDay`, minus skipped
 * days, merged: sorted, disjoint, and never touching. Exact from `firstDay + 1` on (a range from
 * `firstDay - 1` may reach into `firstDay`) up to the start of `lastDay + 1`.
 */
function wallSpans(uptime: Uptime, firstDay: number, lastDay: number, skip: ReadonlySet<string>): WallSpan[] {
  const skippedDays = new Set<number>();
  for (const date of skip) {
    const day = Date.parse(date) / DAY_MS;
    if (day >= firstDay && day <= lastDay + 1) skippedDays.add(day);
  }
  const skipped = (day: number) => skippedDays.has(day);
  const pieces: WallSpan[] = [];
  for (let day = firstDay; day <= lastDay; day++) {
    const dayStart = day * DAY_MS;
    const nextDayStart = dayStart + DAY_MS;
    for (const spec of uptime.specs) {
      if (!spec.days.includes(weekday(day))) continue;
      const start = dayStart + spec.start * MINUTE_MS;
      const end = dayStart + spec.end * MINUTE_MS;
      if (!skipped(day)) pieces.push({ start, end: Math.min(end, nextDayStart) });
      if (end > nextDayStart && !skipped(day + 1)) pieces.push({ start: nextDayStart, end });
    }
  }
  pieces.sort((a, b) => a.start - b.start);
  const merged: WallSpan[] = [];
  for (const piece of pieces) {
    const last = merged[merged.length - 1];
    if (last !== undefined && piece.start <= last.end) {
      merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, piece.end) };
    } else merged.push(piece);
  }
  return merged;
}

/**
 * The edges whose wall time falls on days `fromDay`..`toDay - 1`, in time order. Spans are built
 * two days wider on each side: a range crosses at most one midnight, and boundaries that cancel in
 * a gap lie less than a day apart.
 */
function edgesOnDays(
  uptime: Uptime,
  timeZone: string,
  skip: ReadonlySet<string>,
  fromDay: number,
  toDay: number,
): WallEdge[] {
  const boundaries: WallEdge[] = [];
  for (const span of wallSpans(uptime, fromDay - 3, toDay + 1, skip)) {
    boundaries.push({ at: instantOf(span.start, timeZone), up: true, wall: span.start });
    boundaries.push({ at: instantOf(span.end, timeZone), up: false, wall: span.end });
  }
  // Boundaries alternate up/down and their instants never decrease. A run of boundaries at one
  // instant cancels in pairs: an even run leaves no edge, an odd one leaves its first.
  const edges: WallEdge[] = [];
  for (let index = 0; index < boundaries.length; ) {
    const first = boundaries[index] as WallEdge;
    let end = index + 1;
    while (end < boundaries.length && (boundaries[end] as WallEdge).at === first.at) end += 1;
    if ((end - index) % 2 === 1 && first.wall >= fromDay * DAY_MS && first.wall < toDay * DAY_MS) {
      edges.push(first);
    }
    index = end;
  }
  return edges;
}

/**
 * Day counts searched one after the other: most edges are found in the first, cheap, chunk. They add
 * up to a little more than the horizon, as the search starts two or three days to the other side.
 */
const CHUNKS = [8, 24, 96, UPTIME_HORIZON_DAYS + 3 - 128] as const;

function localDay(instant: number, timeZone: string): number {
  return Math.floor(wallClockMs(instant, timeZone) / DAY_MS);
}

const NO_SKIP: ReadonlySet<string> = new Set();

/**
 * Whether the window is up at an instant. The uptime is the union, over every local date D whose
 * weekday a spec lists, of [instant(D, start), instant(D or D+1, end)), minus every whole local day
 * in `skipDates` ([instant(H, 00:00), instant(H+1, 00:00))). instant() follows fixed-time cron jobs:
 * a wall time in a spring-forward gap is the instant the gap ends, one that occurs twice its first
 * occurrence. So a range ending at 01:30 on a fall-back night ends at the first 01:30 and stays
 * ended through the repeated hour.
 */
export function isUp(
  uptime: Uptime,
  at: Date,
  timeZone: string,
  skipDates: ReadonlySet<string> = NO_SKIP,
): boolean {
  const instant = at.getTime();
  const wall = wallClockMs(instant, timeZone);
  const day = Math.floor(wall / DAY_MS);
  // Wall time and instant differ by less than a day, so only spans near `wall` can hold `instant`.
  return wallSpans(uptime, day - 2, day + 1, skipDates).some(
    (span) =>
      span.start <= wall + DAY_MS &&
      span.end >= wall - DAY_MS &&
      instantOf(span.start, timeZone) <= instant &&
      instant < instantOf(span.end, timeZone),
  );
}

/**
 * The first instant strictly after `after` at which membership changes, with the state from then
 * on. Undefined when nothing changes in the UPTIME_HORIZON_DAYS local days after `after`'s.
 */
export function nextEdge(
  uptime: Uptime,
  after: Date,
  timeZone: string,
  skipDates: ReadonlySet<string> = NO_SKIP,
): UptimeEdge | undefined {
  const afterMs = after.getTime();
  // Edges on earlier local days lie before `after`: an offset never changes by two days.
  let fromDay = localDay(afterMs, timeZone) - 2;
  for (const days of CHUNKS) {
    const edge = edgesOnDays(uptime, timeZone, skipDates, fromDay, fromDay + days).find(
      (candidate) => candidate.at > afterMs,
    );
    if (edge)
      return { at: new Date(edge.at), up: edge.up, localDate: isoDate(Math.floor(edge.wall / DAY_MS)) };
    fromDay += days;
  }
  return undefined;
}

/**
 * The state at `at` and the edge that began it. `since` is the same for every instant of one period
 * and equals the `at` of the nextEdge that opened it, so it can key "the first reconciliation of
 * this period". It is undefined when no edge lies within UPTIME_HORIZON_DAYS local days back.
 */
export function currentPeriod(
  uptime: Uptime,
  at: Date,
  timeZone: string,
  skipDates: ReadonlySet<string> = NO_SKIP,
): UptimePeriod {
  const atMs = at.getTime();
  // Edges on later local days lie after `at`.
  let toDay = localDay(atMs, timeZone) + 3;
  for (const days of CHUNKS) {
    const edges = edgesOnDays(uptime, timeZone, skipDates, toDay - days, toDay);
    const edge = edges.findLast((candidate) => candidate.at <= atMs);
    if (edge) return { up: edge.up, since: new Date(edge.at) };
    toDay -= days;
  }
  return { up: isUp(uptime, at, timeZone, skipDates), since: undefined };
}
