import type { Queue } from 'bullmq';
import type { RunJobData, RunJobResult } from './run-queue.js';

/** A run the queue holds: taken by a worker (`running`) or waiting for one (`queued`). */
export interface RunUnderWay {
  runId: string;
  job: string;
  state: 'running' | 'queued';
}

/**
 * The runs the queue holds now, at most `limit` of each state: running (oldest first), then
 * queued (waiting for a worker, then delayed: a run waiting its turn). A run is listed once, by
 * its run id: a split run's parts are its own work, and an approval's expiry waiting on the queue
 * is no run.
 */
export async function runsUnderWay(
  queue: Queue<RunJobData, RunJobResult>,
  limit: number,
): Promise<RunUnderWay[]> {
  const [running, queued] = await Promise.all([
    queue.getJobs(['active'], 0, limit - 1, true),
    queue.getJobs(['waiting', 'prioritized', 'delayed'], 0, limit - 1, true),
  ]);
  const runs = new Map<string, RunUnderWay>();
  const add = (entries: typeof running, state: RunUnderWay['state']) => {
    for (const entry of entries) {
      const data = entry?.data;
      if (!data || data.part || data.approval?.step === 'expire' || runs.has(data.runId)) continue;
      runs.set(data.runId, { runId: data.runId, job: data.job, state });
    }
  };
  add(running, 'running');
  add(queued, 'queued');
  const listed = [...runs.values()];
  const runningNow = listed.filter((entry) => entry.state === 'running');
  return [...runningNow, ...listed.filter((entry) => entry.state === 'queued').slice(0, limit)];
}
