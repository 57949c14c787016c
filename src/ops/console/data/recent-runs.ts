import { WINDOW_ACTION } from '../../../engine/index.js';
import type { RecentEntry, RunBrief } from '../model.js';

/**
 * A window reconciliation that changed nothing: it acted on no workspace (none paused, resumed or
 * failed), found nothing, and went through. Windows reconcile every few minutes, so these are most
 * runs; the drift one may report is on the fleet page and in the window's last run.
 */
export function isQuiet(run: RunBrief): boolean {
  const { counts } = run;
  return (
    run.action === WINDOW_ACTION &&
    !run.dryRun &&
    run.outcome === 'succeeded' &&
    counts.succeeded + counts.failed + counts.planned === 0 &&
    run.findings === 0
  );
}

/**
 * The newest runs as the schedules page lists them, newest first: every run that did something
 * on a row of its own, and each stretch of quiet reconciliations between two such runs folded into
 * one row, so that a window reconciled every minute does not push the other jobs' runs out.
 */
export function foldQuiet(runs: readonly RunBrief[], rows: number): RecentEntry[] {
  const entries: RecentEntry[] = [];
  for (const run of runs) {
    const last = entries.at(-1);
    if (!isQuiet(run)) {
      if (entries.length === rows) break;
      entries.push({ kind: 'run', run });
    } else if (last?.kind === 'quiet') {
      last.count += 1;
      const job = last.jobs.find((entry) => entry.job === run.job);
      if (job) job.count += 1;
      else last.jobs.push({ job: run.job, count: 1 });
      last.drifting += run.counts.skipped > 0 ? 1 : 0;
      last.from = runAt(run) ?? last.from;
    } else {
      if (entries.length === rows) break;
      const at = runAt(run) ?? '';
      entries.push({
        kind: 'quiet',
        count: 1,
        jobs: [{ job: run.job, count: 1 }],
        drifting: run.counts.skipped > 0 ? 1 : 0,
        from: at,
        to: at,
        latest: run,
      });
    }
  }
  return entries;
}

function runAt(run: RunBrief): string | undefined {
  return run.finishedAt ?? run.startedAt ?? run.scheduledAt;
}
