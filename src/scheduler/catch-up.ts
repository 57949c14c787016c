import { type Firing, nextFirings, nextRunOf, type PolicyJob } from '../policy/index.js';

/** What a scheduler owes a job for the time it was not looking. */
export interface CatchUpPlan {
  /** The one missed tick to run now, marked as a catch-up. */
  run: Firing | undefined;
  /** Ticks that will not run (cut at MAX_MISSED): before the window, or all of them without one. */
  missed: Firing[];
}

/** Beyond this many missed ticks only "at least this many" matters. */
export const MAX_MISSED = 1000;

function ticksBetween(job: PolicyJob, from: Date, to: Date): Firing[] {
  return nextFirings(job.schedule, { from, until: to, count: MAX_MISSED + 1 });
}

/**
 * A window's reconciliations are level-based: each one brings the window up to date, so after
 * downtime only the latest due one runs (as a catch-up) and none is counted as missed.
 */
function latestWindowFiring(job: PolicyJob, last: Date, now: Date): Firing | undefined {
  const window = job.window;
  if (!window) return undefined;
  // the newest interval tick or edge in (last, now]: step back one interval, then walk forward
  const from = new Date(Math.max(last.getTime(), now.getTime() - window.every - 1));
  let latest: Firing | undefined;
  for (
    let next = nextRunOf(job, from);
    next && next.at.getTime() <= now.getTime();
    next = nextRunOf(job, next.at)
  )
    latest = next;
  return latest;
}

/**
 * The ticks of `job` in (`last`, `now`]: with `catchUp`, the most recent one inside the window
 * runs once and the older ones are missed; with `catchUp: none` all of them are missed. Pure, so
 * the rule is tested without a clock.
 */
export function planCatchUp(job: PolicyJob, last: Date, now: Date): CatchUpPlan {
  if (job.window) return { run: latestWindowFiring(job, last, now), missed: [] };
  let run: Firing | undefined;
  if (job.catchUp !== null) {
    const windowStart = new Date(Math.max(last.getTime(), now.getTime() - job.catchUp));
    // every tick in the window is looked at, so the latest is found however many there are
    for (let from = windowStart; ; ) {
      const ticks = ticksBetween(job, from, now);
      if (ticks.length === 0) break;
      run = ticks.at(-1);
      if (ticks.length <= MAX_MISSED) break;
      from = (run as Firing).at;
    }
  }
  const missed = ticksBetween(job, last, now)
    .filter((firing) => firing.at.getTime() !== run?.at.getTime())
    .slice(0, MAX_MISSED);
  return { run, missed };
}
