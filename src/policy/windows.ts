import {
  type CheckContext,
  checkCalendarNames,
  checkNotify,
  checkTarget,
  checkTimeZone,
  isMap,
} from './check.js';
import type { PolicyProblem } from './errors.js';
import { problemAt } from './issues.js';
import type { ValuePath } from './paths.js';
import { type Firing, nextFiring } from './schedule.js';
import type { TargetSelector, WindowResumeMode } from './schema.js';
import { wallClockMs } from './timezone.js';
import { nextEdge, parseUptime, type Uptime } from './uptime.js';

/**
 * Windows: a target's desired state over time (`uptime`), reconciled by the scheduler every
 * `every` and at each edge of the uptime. See docs/windows.md.
 */

/** What a window's runs are executed by: an action the engine has, which no job may name. */
export const WINDOW_ACTION = 'reconcile-window';

/** A window as its reconciliations need it. */
export interface PolicyWindow {
  readonly uptime: Uptime;
  /** `uptime` as written, for messages. */
  readonly uptimeText: string;
  readonly timezone: string;
  /** Local dates (`YYYY-MM-DD`) entirely outside uptime, from the `skip` calendars. */
  readonly skipDates: ReadonlySet<string>;
  readonly every: number;
  readonly enforce: boolean;
  readonly resume: WindowResumeMode;
  readonly grace: number;
  /** Consecutive reconciliations leaving the same workspaces drifting before `drift-persists`. */
  readonly driftPersistsAfter: number;
  /** The other windows of the policy, so a workspace found under two is refused, never fought over. */
  readonly others: readonly { readonly name: string; readonly selector: TargetSelector }[];
}

/** The next instant a window's reconciliation is due after `after`: its next interval tick or uptime edge. */
export function nextWindowFiring(window: PolicyWindow, after: Date): Firing {
  const tick = (Math.floor(after.getTime() / window.every) + 1) * window.every;
  const edge = nextEdge(window.uptime, after, window.timezone, window.skipDates);
  const at = edge && edge.at.getTime() <= tick ? edge.at : new Date(tick);
  return { at, localDate: edge && edge.at === at ? edge.localDate : localDateOf(at, window.timezone) };
}

function localDateOf(at: Date, timeZone: string): string {
  return new Date(wallClockMs(at.getTime(), timeZone)).toISOString().slice(0, 10);
}

/** The next `count` uptime edges of a window after `from`, for `nightshift next`. */
export function nextWindowEdges(
  window: PolicyWindow,
  from: Date,
  count: number,
): (Firing & { readonly up: boolean })[] {
  const edges: (Firing & { up: boolean })[] = [];
  for (
    let edge = nextEdge(window.uptime, from, window.timezone, window.skipDates);
    edge && edges.length < count;
  ) {
    edges.push(edge);
    edge = nextEdge(window.uptime, edge.at, window.timezone, window.skipDates);
  }
  return edges;
}

/** The next run of a job or window after `after`: cron for a job, interval and edges for a window. */
export function nextRunOf(
  job: {
    readonly schedule: { readonly cron: string; readonly timezone: string };
    readonly window?: PolicyWindow;
  },
  after: Date,
): Firing | undefined {
  return job.window ? nextWindowFiring(job.window, after) : nextFiring(job.schedule, after);
}

/** Checks of one window that need more than its structure: uptime, zone, references, names. */
export function checkWindow(context: CheckContext, name: string, window: unknown): PolicyProblem[] {
  if (!isMap(window)) return [];
  const { source } = context;
  const at: ValuePath = ['windows', name];
  const problems: PolicyProblem[] = [];
  if (context.jobActions.has(name))
    problems.push(
      problemAt(
        source,
        at,
        `a job is also called "${name}"; jobs and windows share one set of names (history, suspend, run): rename one`,
        'key',
      ),
    );
  if (typeof window.uptime === 'string' && window.uptime !== '') {
    const parsed = parseUptime(window.uptime);
    if (!parsed.ok) problems.push(problemAt(source, [...at, 'uptime'], `invalid uptime: ${parsed.message}`));
  }
  problems.push(...checkTimeZone(context, [...at, 'timezone'], window.timezone));
  problems.push(...checkNotify(context, [...at, 'notify'], window.notify));
  problems.push(...checkTarget(context, [...at, 'target'], window.target));
  problems.push(...checkCalendarNames(context, [...at, 'skip'], window.skip));
  return problems;
}
