import {
  type CheckContext,
  checkCalendars,
  checkJob,
  checkNotificationUrls,
  checkNotify,
  checkTimeZone,
  isMap,
  type RawMap,
} from './check.js';
import type { PolicyProblem } from './errors.js';
import type { PolicyEnv } from './interpolate.js';
import { parseWithProblems } from './issues.js';
import { type JobDocument, JobSchema, type WindowDocument, WindowSchema } from './schema.js';
import { parseUptime } from './uptime.js';
import { checkWindow } from './windows.js';

/** A job as read: its document and its action's parameters, each undefined when it has errors. */
export interface CheckedJob {
  name: string;
  document: JobDocument | undefined;
  params: Readonly<Record<string, unknown>> | undefined;
}

/** A window as read: undefined when it has errors, or its uptime cannot be read yet. */
export interface CheckedWindow {
  name: string;
  document: WindowDocument | undefined;
}

/** Adds the problems of the sections jobs and windows share: defaults, calendars, notifications. */
export function checkSharedSections(
  context: CheckContext,
  root: RawMap,
  options: { readonly env: PolicyEnv; readonly now?: Date },
  problems: PolicyProblem[],
): void {
  const defaults = isMap(root.defaults) ? root.defaults : undefined;
  problems.push(...checkTimeZone(context, ['defaults', 'timezone'], defaults?.timezone));
  problems.push(...checkNotify(context, ['defaults', 'notify'], defaults?.notify));
  problems.push(...checkCalendars(context, root.calendars, options.now ?? new Date()));
  problems.push(...checkNotificationUrls(context.source, root.notifications, options.env));
}

/** Reads every job on its own, so one bad job cannot hide the others' problems, adding its problems to `problems` as it goes. */
export function checkJobs(
  context: CheckContext,
  jobEntries: readonly [string, unknown][],
  problems: PolicyProblem[],
): CheckedJob[] {
  const jobs: CheckedJob[] = [];
  for (const [name, job] of jobEntries) {
    const parsed = parseWithProblems(JobSchema, job, context.source, { at: ['jobs', name] });
    const checked = checkJob(context, name, job);
    if (parsed.problems.length > 0) problems.push(...parsed.problems);
    if (checked.problems.length > 0) problems.push(...checked.problems);
    jobs.push({ name, document: parsed.data, params: checked.params });
  }
  return jobs;
}

/** Reads every window, each on its own, adding its problems to `problems` as it goes. */
export function checkWindows(
  context: CheckContext,
  root: RawMap,
  problems: PolicyProblem[],
): CheckedWindow[] {
  const windows: CheckedWindow[] = [];
  for (const [name, window] of Object.entries(isMap(root.windows) ? root.windows : {})) {
    const parsed = parseWithProblems(WindowSchema, window, context.source, { at: ['windows', name] });
    problems.push(...parsed.problems, ...checkWindow(context, name, window));
    // an uptime still "${VAR}" (unset, a warning in validate) leaves the window unread, like a job
    const readable = parsed.data && parseUptime(parsed.data.uptime).ok;
    windows.push({ name, document: readable ? parsed.data : undefined });
  }
  return windows;
}
