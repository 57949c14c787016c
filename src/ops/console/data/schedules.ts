import {
  describeInstant,
  formatLocal,
  hideSecrets,
  nextFiring,
  nextWindowEdges,
  type Policy,
  type PolicyJob,
  type TargetSelector,
} from '../../../policy/index.js';
import { describeSuspension, type Suspension } from '../../../store/index.js';
import type { FiringView, ScheduleEntry, SchedulesView } from '../model.js';
import { foldQuiet } from './recent-runs.js';
import { type ConsoleSources, type PolicyInForce, runBrief } from './sources.js';

/** How many rows of the newest runs the schedules page lists below the jobs. */
const RECENT_ROWS = 20;
/** How many of the newest runs it reads for them: quiet reconciliations folded, a bound on the read. */
const RECENT_SCAN = 200;
/** How many of a calendar's next dates an entry names. */
const UPCOMING_SKIPS = 3;

function selectorText(selector: TargetSelector): string {
  const parts = [
    `workgroups ${selector.workgroups.join(', ')}`,
    `workspaces ${selector.workspaces.join(', ')}`,
  ];
  if (selector.exclude.length > 0) parts.push(`except ${selector.exclude.join(', ')}`);
  return parts.join(' / ');
}

function targetText(job: PolicyJob): string {
  if (!job.target) return '-';
  const words = selectorText(job.target.selector);
  return job.target.name ? `${job.target.name}: ${words}` : words;
}

function everyText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}

function scheduleText(job: PolicyJob): string {
  if (job.window) return `uptime ${job.window.uptimeText}; reconciled every ${everyText(job.window.every)}`;
  return `cron ${job.schedule.cron}`;
}

/** A job's next firing; a window's next uptime edge (its reconciliations in between are in `schedule`). */
function nextOf(job: PolicyJob, now: Date): FiringView | null {
  try {
    if (job.window) {
      const edge = nextWindowEdges(job.window, now, 1)[0];
      if (!edge) return null;
      return {
        ...describeInstant(edge.at, job.timezone),
        timezone: job.timezone,
        edge: edge.up ? 'uptime starts' : 'uptime ends',
      };
    }
    const firing = nextFiring(job.schedule, now, job.skipDates);
    return firing ? { ...describeInstant(firing.at, job.timezone), timezone: job.timezone } : null;
  } catch {
    // a schedule or zone from a variable this process lacks: nothing to tell
    return null;
  }
}

/** A job's `skip:` calendars, and whether they skip today in its zone. */
function skipOf(job: PolicyJob, now: Date): ScheduleEntry['skip'] {
  if (job.skip.length === 0) return null;
  const dates = job.window ? job.window.skipDates : job.skipDates;
  let today: string;
  try {
    today = formatLocal(now.getTime(), job.timezone).slice(0, 10);
  } catch {
    // a zone from a variable this process lacks: the dates alone
    today = now.toISOString().slice(0, 10);
  }
  return {
    calendars: [...job.skip],
    today: dates.has(today) ? today : null,
    upcoming: [...dates]
      .filter((date) => date > today)
      .sort()
      .slice(0, UPCOMING_SKIPS),
  };
}

function suspendedOf(job: PolicyJob, record: Suspension | undefined): ScheduleEntry['suspended'] {
  if (record)
    return { by: 'command', detail: `${describeSuspension(record)}${record.by ? `, by ${record.by}` : ''}` };
  if (job.suspend) return { by: 'policy', detail: 'suspend: true in the policy' };
  return null;
}

async function entriesOf(policy: Policy, sources: ConsoleSources, now: Date): Promise<ScheduleEntry[]> {
  const [suspended, lastRuns] = await Promise.all([
    sources.suspensions.all(),
    Promise.all(policy.jobs.map((job) => sources.history.list({ job: job.name, limit: 1 }))),
  ]);
  // what the policy says is shown as the scheduler and the CLI show it: secrets as ${NAME}
  const hide = hideSecrets(policy.secrets);
  return policy.jobs.map((job, i) => {
    const suspension = suspendedOf(job, suspended.get(job.name));
    const last = lastRuns[i]?.[0];
    return hide({
      name: job.name,
      kind: job.kind,
      action: job.window ? 'window' : job.action,
      target: targetText(job),
      schedule: scheduleText(job),
      timezone: job.timezone,
      dryRun: job.dryRun,
      next: suspension ? null : nextOf(job, now),
      suspended: suspension,
      skip: skipOf(job, now),
      lastRun: last ? runBrief(last) : null,
    });
  });
}

/** `/api/schedules`: every job and window of the policy in force, with its next firing and last run. */
export async function schedulesView(
  sources: ConsoleSources,
  policyInForce: PolicyInForce,
): Promise<SchedulesView> {
  const now = sources.now?.() ?? new Date();
  const [{ record, policy }, rejected, recent] = await Promise.all([
    policyInForce.read(),
    sources.policies.rejected(),
    sources.history.list({ limit: RECENT_SCAN }),
  ]);
  const entries = typeof policy === 'string' ? [] : await entriesOf(policy, sources, now);
  return {
    generatedAt: now.toISOString(),
    policy: record
      ? {
          sha: record.sha,
          loadedAt: record.loadedAt,
          host: record.host,
          rejected: rejected
            ? {
                sha: rejected.sha,
                at: rejected.at,
                host: rejected.host,
                problems: rejected.problems,
                ...(rejected.error ? { error: rejected.error } : {}),
              }
            : null,
        }
      : null,
    problem: typeof policy === 'string' ? policy : null,
    entries,
    recent: foldQuiet(recent.map(runBrief), RECENT_ROWS),
  };
}
