/** Least time between two progress reports of a run to BullMQ (the last one always goes). */
const PROGRESS_INTERVAL_MS = 250;

/** A run's progress as its BullMQ job shows it. */
export interface RunProgress {
  done: number;
  total: number;
}

/**
 * Reports a run's progress at most a few times a second (one write per target was a good share
 * of a big run's CPU); the last report, all targets done, always goes. A failed write is
 * dropped: progress is for show.
 */
export function throttledProgress(
  report: (progress: RunProgress) => Promise<unknown>,
  now: () => number = Date.now,
): (done: number, total: number) => void {
  let reportedAt = 0;
  return (done, total) => {
    const at = now();
    if (done < total && at - reportedAt < PROGRESS_INTERVAL_MS) return;
    reportedAt = at;
    void report({ done, total }).catch(() => undefined);
  };
}
