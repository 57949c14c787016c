import { Cron } from 'croner';
import { formatLocal, formatUtc, offsetAt } from './timezone.js';

/**
 * How a schedule behaves on daylight-saving transition days (see docs/policy.md, "Schedules and
 * daylight saving time"):
 * - `fixed`: seconds, minutes and hours hold only numbers, lists and ranges (`30 2 * * *`,
 *   `0 8,20 * * 1-5`). Each listed time is a fixed wall-clock time. One that falls in a
 *   spring-forward gap fires when the gap ends; one that occurs twice fires at the first occurrence.
 * - `interval`: one of those fields has `*` or a step (`*\/15 * * * *`, `0 * * * *`). The job
 *   follows elapsed time: times in a gap do not exist and are skipped, and a repeated hour is
 *   run through twice.
 */
export type ScheduleKind = 'fixed' | 'interval';

export interface CronCheck {
  readonly ok: boolean;
  /** Why the expression is refused; set when `ok` is false. */
  readonly message?: string;
  readonly kind?: ScheduleKind;
}

/** A cron expression and the time zone it is read in. */
export interface Schedule {
  readonly cron: string;
  readonly timezone: string;
}

/** One firing: the instant, and the local calendar date it was scheduled for (`YYYY-MM-DD`). */
export interface Firing {
  readonly at: Date;
  readonly localDate: string;
}

const CRON_OPTIONS = { mode: '5-or-6-parts', utcOffset: 0 } as const;
const FIELD_NAMES = '(minute hour day-of-month month day-of-week)';

/** Cron instances read wall-clock time as UTC: croner answers "which wall times match", we map them to instants. */
const wallCrons = new Map<string, Cron | string>();
const MAX_CACHED = 10_000;

function wallCron(expression: string): Cron | string {
  let cached = wallCrons.get(expression);
  if (cached === undefined) {
    try {
      cached = new Cron(expression, CRON_OPTIONS);
      if (cached.nextRun(new Date(0)) === null) cached = 'it never matches a date';
    } catch (error) {
      cached = cronerReason(error);
    }
    if (wallCrons.size >= MAX_CACHED) wallCrons.clear();
    wallCrons.set(expression, cached);
  }
  return cached;
}

function cronerReason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const reason = text.replace(/^CronPattern: /, '');
  return reason.charAt(0).toLowerCase() + reason.slice(1);
}

/** `check`, answering each expression once: a policy of thousands of jobs has a few expressions. */
function byExpression<T>(check: (expression: string) => T): (expression: string) => T {
  const answers = new Map<string, T>();
  return (expression) => {
    if (answers.has(expression)) return answers.get(expression) as T;
    const answer = check(expression);
    if (answers.size >= MAX_CACHED) answers.clear();
    answers.set(expression, answer);
    return answer;
  };
}

/** Checks a cron expression: 5 fields, or 6 with seconds first, as croner reads them. */
export const checkCron = byExpression((expression: string): CronCheck => {
  const fields = expression.trim().split(/\s+/);
  if (expression.trim().startsWith('@')) {
    return { ok: false, message: `nicknames like "@daily" are not supported; write 5 fields ${FIELD_NAMES}` };
  }
  if (fields.length !== 5 && fields.length !== 6) {
    return {
      ok: false,
      message: `expected 5 fields ${FIELD_NAMES}, or 6 with seconds first, found ${fields.length}`,
    };
  }
  const cron = wallCron(expression);
  if (typeof cron === 'string') return { ok: false, message: cron };
  const timeFields = fields.length === 6 ? fields.slice(0, 3) : fields.slice(0, 2);
  const kind: ScheduleKind = timeFields.some((field) => /[*?/]/.test(field)) ? 'interval' : 'fixed';
  return { ok: true, kind };
});

/**
 * A schedule that fires far more often than it reads: a seconds field that matches twice in a
 * minute (`*\/10 0 9 * * *`), or `*` for the minute under a set hour (`* 19 * * 1-5` fires every
 * minute from 19:00 to 19:59, where `0 19 * * 1-5` was meant). `* * * * *`, every minute of every
 * hour, is taken as meant.
 */
export const frequencyWarning = byExpression((expression: string): string | undefined => {
  const cron = wallCron(expression);
  if (typeof cron === 'string') return undefined;
  const fields = expression.trim().split(/\s+/);
  const [seconds, minute, hour] = fields.length === 6 ? fields : ['0', ...fields];
  if (seconds !== undefined && !/^\d+$/.test(seconds)) {
    // the first firing is the first matching second of its minute: is the next one in that minute too?
    const first = cron.nextRun(new Date(-1000));
    const second = first && cron.nextRun(first);
    if (first && second && Math.floor(first.getTime() / 60_000) === Math.floor(second.getTime() / 60_000))
      return `fires more than once a minute (seconds field "${seconds}")`;
  }
  if ((minute === '*' || minute === '?') && hour !== undefined && !/[*?]/.test(hour)) {
    const minuteAt = fields.length - 5;
    const meant = fields.map((field, index) => (index === minuteAt ? '0' : field));
    const span = /^\d+$/.test(hour)
      ? `from ${hour.padStart(2, '0')}:00 to ${hour.padStart(2, '0')}:59`
      : `of the hours ${hour}`;
    return `fires every minute ${span}; did you mean "${meant.join(' ')}"?`;
  }
  return undefined;
});

/** The local date `YYYY-MM-DD` of a wall-clock time encoded as UTC. */
function dateOf(wallMs: number): string {
  return new Date(wallMs).toISOString().slice(0, 10);
}

const DAY_MS = 86_400_000;
/** Wider than any offset change ever made (Samoa skipped a whole day in 2011). */
const WINDOW_MS = 26 * 3_600_000;

type WallTime =
  | { readonly kind: 'once'; readonly at: number }
  | { readonly kind: 'twice'; readonly first: number; readonly second: number }
  | { readonly kind: 'gap'; readonly gapEnd: number };

/** The instants at which a wall-clock time occurs in a zone: once, twice (fall back) or never (spring forward). */
function resolveWallTime(wallMs: number, timeZone: string): { time: WallTime; maxOffset: number } {
  const offsets = new Set([offsetAt(wallMs - WINDOW_MS, timeZone), offsetAt(wallMs + WINDOW_MS, timeZone)]);
  for (const offset of [...offsets]) offsets.add(offsetAt(wallMs - offset, timeZone));
  const instants = [...offsets]
    .map((offset) => wallMs - offset)
    .filter((instant) => offsetAt(instant, timeZone) === wallMs - instant)
    .sort((a, b) => a - b);
  const maxOffset = Math.max(...offsets);
  const [first, second] = instants;
  if (first !== undefined && second !== undefined)
    return { time: { kind: 'twice', first, second }, maxOffset };
  if (first !== undefined) return { time: { kind: 'once', at: first }, maxOffset };
  return { time: { kind: 'gap', gapEnd: gapEnd(wallMs, timeZone, offsets) }, maxOffset };
}

/** Where a fixed-time job fires for a wall time: when the gap ends, or at the first occurrence. */
function fixedInstant(time: WallTime): number {
  if (time.kind === 'once') return time.at;
  return time.kind === 'twice' ? time.first : time.gapEnd;
}

/**
 * The instant a fixed wall-clock time (encoded as UTC, see wallClockMs) stands for in a zone, by the
 * rule of fixed-time jobs: a time inside a spring-forward gap is the instant the gap ends; a time
 * that occurs twice (fall back) is its first occurrence. Uptime windows share this rule, so a
 * window and a cron job written for the same wall time act at the same instant.
 */
export function wallTimeInstant(wallMs: number, timeZone: string): number {
  return fixedInstant(resolveWallTime(wallMs, timeZone).time);
}

/** The instant a spring-forward gap containing `wallMs` ends: the first instant whose wall time is after it. */
function gapEnd(wallMs: number, timeZone: string, offsets: ReadonlySet<number>): number {
  let low = wallMs - Math.max(...offsets);
  let high = wallMs - Math.min(...offsets);
  // Invariant: wall time at `low` is before `wallMs`, at `high` after it. Transitions fall on whole seconds.
  while (high - low > 1000) {
    const middle = Math.floor((low + high) / 2000) * 1000;
    if (middle <= low) break;
    if (middle + offsetAt(middle, timeZone) < wallMs) low = middle;
    else high = middle;
  }
  return high;
}

export interface NextFiringsOptions {
  /** Firings strictly after this instant. */
  readonly from: Date;
  readonly count: number;
  /** No firing after this instant: the search stops there instead of finding `count` firings. */
  readonly until?: Date;
  /** Local dates (`YYYY-MM-DD`) on which the job does not fire, from its `skip` calendars. */
  readonly skipDates?: ReadonlySet<string>;
}

/**
 * The next `count` firings of a schedule after `from`, in time order, with the daylight-saving
 * rules of its kind (see ScheduleKind). Croner finds the matching wall-clock times; this function
 * turns them into instants, because croner 11 drops a fixed-time firing whose gap ends on the next
 * day (America/Nuuk springs forward at 23:00). Fewer than `count` firings come back only when the
 * expression has no more, or `until` comes first.
 */
export function nextFirings(schedule: Schedule, options: NextFiringsOptions): Firing[] {
  const check = checkCron(schedule.cron);
  const cron = wallCron(schedule.cron);
  if (!check.ok || typeof cron === 'string')
    throw new Error(`invalid cron expression "${schedule.cron}": ${check.message}`);
  const fixed = check.kind === 'fixed';
  const zone = schedule.timezone;
  const fromMs = options.from.getTime();
  const skip = options.skipDates ?? new Set<string>();
  const untilMs = options.until?.getTime() ?? Number.POSITIVE_INFINITY;

  const firings: Firing[] = [];
  // Interval jobs run a repeated hour twice, so later wall times can map to earlier instants:
  // candidates wait here, sorted, until no later wall time can come before them.
  const pending: Firing[] = [];
  let lastAt = Number.NEGATIVE_INFINITY;
  const flush = (bound: number) => {
    while (pending.length > 0 && firings.length < options.count) {
      const next = pending[0] as Firing;
      if (next.at.getTime() > bound) return;
      pending.shift();
      if (next.at.getTime() <= lastAt) continue;
      lastAt = next.at.getTime();
      firings.push(next);
    }
  };
  const add = (instant: number, localDate: string) => {
    if (instant <= fromMs) return;
    const firing = { at: new Date(instant), localDate };
    const index = pending.findIndex((other) => other.at.getTime() > instant);
    if (index === -1) pending.push(firing);
    else pending.splice(index, 0, firing);
  };

  // A wall time before `from`'s own can still fire after `from` when the clock is about to go back.
  const lowestOffset = Math.min(offsetAt(fromMs, zone), offsetAt(fromMs + WINDOW_MS, zone));
  let cursor = new Date(fromMs + lowestOffset);
  while (firings.length < options.count) {
    const match = cron.nextRun(cursor);
    if (match === null) {
      flush(Number.POSITIVE_INFINITY);
      break;
    }
    const wall = match.getTime();
    const localDate = dateOf(wall);
    if (skip.has(localDate)) {
      cursor = new Date(Math.floor(wall / DAY_MS) * DAY_MS + DAY_MS - 1000);
      continue;
    }
    const { time, maxOffset } = resolveWallTime(wall, zone);
    if (fixed) add(fixedInstant(time), localDate);
    else if (time.kind === 'once') add(time.at, localDate);
    else if (time.kind === 'twice') {
      add(time.first, localDate);
      add(time.second, localDate);
    }
    flush(wall - maxOffset);
    // every firing up to `until` has been flushed once the flush bound is past it
    if (wall - maxOffset > untilMs) break;
    cursor = match;
  }
  return options.until ? firings.filter((firing) => firing.at.getTime() <= untilMs) : firings;
}

/** The next firing after `from`, or undefined when there is none. */
export function nextFiring(
  schedule: Schedule,
  from: Date,
  skipDates?: ReadonlySet<string>,
): Firing | undefined {
  return nextFirings(schedule, { from, count: 1, ...(skipDates ? { skipDates } : {}) })[0];
}

/** `at` in UTC and `local` with the zone's offset, as `nightshift next --json` prints them. */
export function describeInstant(at: Date, timeZone: string): { at: string; local: string } {
  return { at: formatUtc(at.getTime()), local: formatLocal(at.getTime(), timeZone) };
}
