import { type Firing, nextFirings, type PolicyJob } from '../policy/index.js';

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
  return nextFirings(job.schedule, { from, count: MAX_MISSED + 1 }).filter(
    (f) => f.at.getTime() <= to.getTime(),
  );
}

/**
 * The ticks of `job` in (`last`, `now`]: with `catchUp`, the most recent one inside the window
 * runs once and the older ones are missed; with `catchUp: none` all of them are missed. Pure, so
 * the rule is tested without a clock.
 */
export function planCatchUp(job: PolicyJob, last: Date, now: Date): CatchUpPlan {
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
