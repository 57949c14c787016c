import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import { type FailedPart, type RunPart, type RunSplitter, sliceListing } from '../engine/index.js';
import type { RunListings } from '../store/index.js';
import { partJobId, type RunJobData, type RunJobResult } from './run-queue.js';

/** How many parts no worker took a run works itself at once. */
const PARTS_WORKED_AT_ONCE = 2;

export interface QueueSplitterOptions {
  queue: Queue<RunJobData, RunJobResult>;
  listings: RunListings;
  /** Most targets in one part. */
  partSize: number;
  /** How often the run looks at its parts' states. */
  pollIntervalMs: number;
}

/**
 * Splits the run `run` carries into parts on the run queue itself: each part is a job of the
 * queue (id `<runId>#<n>`) any worker takes, with the run's data and its share of the targets.
 * The run's job stays active while it waits, so its BullMQ lock and its job's run lock are
 * renewed by its worker as for any run.
 */
export function queueSplitter(options: QueueSplitterOptions, run: RunJobData): RunSplitter {
  const { queue, listings } = options;
  return {
    partSize: options.partSize,
    listing: (runId, part) => listings.load(runId, part),
    earlierParts: (runId) => listings.parts(runId),
    async runParts({ runId, listing, parts, signal, halt, onPoll, work }) {
      const slices = sliceListing(listing, parts);
      await listings.save(runId, slices, parts);
      await queue.addBulk(
        parts.map((part) => {
          const data: RunJobData = {
            runId,
            job: run.job,
            policySha: run.policySha,
            trigger: run.trigger,
            scheduledAt: run.scheduledAt,
            dryRun: run.dryRun,
            ...(run.parameters
              ? { parameters: run.parameters, parameterSignatures: run.parameterSignatures }
              : {}),
            part: { index: part.index, keys: [...part.keys] },
          };
          return { name: run.job, data, opts: { jobId: partJobId(runId, part.index) } };
        }),
      );
      const failed: FailedPart[] = [];
      const working = new Set<Promise<void>>();
      let broken: { error: unknown } | undefined;
      const workHere = (part: RunPart, deliveries: number) => {
        const done: Promise<void> = work(part, deliveries, slices.get(part.index))
          .then(
            (reason) => {
              if (reason) failed.push({ ...part, reason });
            },
            (error: unknown) => {
              broken ??= { error };
            },
          )
          .finally(() => working.delete(done));
        working.add(done);
      };
      let pending = [...parts];
      try {
        while ((pending.length > 0 || working.size > 0) && !broken) {
          const states = await Promise.all(
            pending.map((part) => queue.getJobState(partJobId(runId, part.index))),
          );
          const still: typeof pending = [];
          for (const [i, part] of pending.entries()) {
            const id = partJobId(runId, part.index);
            const state = states[i];
            // parts no worker has taken yet are worked here: a run never waits on parts queued behind
            // it (a worker with one slot, all of a worker's slots held by waiting runs). Two at once,
            // sharing the run's slots, so the slots stay busy while one part finishes its last targets.
            if (state === 'waiting' && halt?.aborted) {
              // cancelled: a part nobody took is taken off the queue and never worked
              if ((await claim(queue, id)) === undefined) still.push(part);
              continue;
            }
            const started =
              state === 'waiting' && working.size < PARTS_WORKED_AT_ONCE ? await claim(queue, id) : undefined;
            if (started !== undefined) workHere(part, started + 1);
            else if (state === 'failed') {
              const job = await queue.getJob(id);
              failed.push({ ...part, reason: job?.failedReason || 'its job failed' });
            } else if (state !== 'completed' && state !== 'unknown') still.push(part);
            // a part gone from the queue (removed once finished) is as good as finished: the run's
            // checkpoints say which of its targets were
          }
          pending = still;
          await onPoll();
          if (working.size >= PARTS_WORKED_AT_ONCE || (pending.length === 0 && working.size > 0))
            await Promise.race(working);
          else if (pending.length > 0)
            await Promise.race([
              ...working,
              sleep(options.pollIntervalMs, undefined, { signal, ref: false }),
            ]);
        }
      } finally {
        // no part this run worked goes on after it returns, even when it returns cut short
        await Promise.all(working);
      }
      if (broken) throw broken.error;
      // the last parts ended after the last look: progress counts them too
      await onPoll();
      await listings.clear(runId);
      return failed;
    },
  };
}

/**
 * Takes a part no worker holds off the queue, for the run to work itself: BullMQ removes a job
 * only while no worker holds its lock, atomically, so a part is worked by the run or by a worker,
 * never both. Resolves with how many times workers started it before, or undefined when a worker
 * has it.
 */
async function claim(queue: Queue<RunJobData, RunJobResult>, id: string): Promise<number | undefined> {
  const job = await queue.getJob(id);
  if (!job) return undefined;
  try {
    await job.remove();
    // how many times workers started it before (and stopped: it is waiting again)
    return job.attemptsStarted;
  } catch {
    return undefined;
  }
}
