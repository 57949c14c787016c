import { randomUUID } from 'node:crypto';
import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import { RUN_TRIGGERS, type RunIdentity, type RunSummary } from '../engine/index.js';
import { RunParametersSchema } from '../policy/index.js';
import type { RedisConnection } from '../store/index.js';
import { BullMQ } from './bullmq.js';

/** The BullMQ queue every run goes through. */
export const RUN_QUEUE = 'runs';

/**
 * What a run's BullMQ job carries: names and ids only. The policy travels as the hash of its
 * text (stored beside the queue), and each worker parses it with its own environment, so a
 * secret referenced as `${VAR}` is never written to Redis.
 */
export const RunJobDataSchema = z.object({
  runId: z.string(),
  job: z.string(),
  policySha: z.string(),
  trigger: z.enum(RUN_TRIGGERS),
  scheduledAt: z.iso.datetime().optional(),
  dryRun: z.boolean(),
  /**
   * A person's parameters for the job (`run --with`), as typed: a secret stays its `${NAME}`. Each
   * worker checks their signatures, then merges them into the job's `with:` as it parses the signed
   * policy, so they pass the action's schema there as the policy's own values do.
   */
  parameters: RunParametersSchema.optional(),
  /**
   * The parameters' signatures (`PolicyStore.signParameters`), bound to this run, its job and its
   * policy: a worker refuses parameters without a signature its keys vouch for.
   */
  parameterSignatures: z.record(z.string(), z.string()).optional(),
  /** Times a worker found the job's previous run still going and put this one back (`overlap: queue`). */
  overlapWaits: z.number().int().nonnegative().optional(),
  /** Times a worker found an earlier execution of this run (or part) still holding its lease, and put this delivery back. */
  leaseWaits: z.number().int().nonnegative().optional(),
  /**
   * Set on a delivery of a run that needs approval, past its first: `act` once approved (the
   * approval's round), `expire` when its approval runs out.
   */
  approval: z.object({ round: z.int().positive(), step: z.enum(['act', 'expire']) }).optional(),
  /** Set on a part of a split run (`runId` is the run's): which of the run's targets it works. */
  part: z.object({ index: z.number().int().nonnegative(), keys: z.array(z.string()) }).optional(),
});
export type RunJobData = z.infer<typeof RunJobDataSchema>;

/**
 * A run (or a part of one) as BullMQ hands it to a worker: one delivery of it. A run taken over,
 * put back at shutdown or sent to wait its turn is delivered again (`deliveriesOf` counts them).
 */
export type RunDelivery = Job<RunJobData, RunJobResult>;

/** What a finished BullMQ job keeps as its return value: the outcome, never a secret. */
export interface RunJobResult {
  runId: string;
  outcome: string;
  counts: Record<string, number>;
  /** A part of a split run: the worker that finished it. */
  worker?: string;
}

/** The run a job carries, as its summary names it. */
export function runIdentity(data: RunJobData, action: string, deliveries?: number): RunIdentity {
  return {
    runId: data.runId,
    job: data.job,
    action,
    trigger: data.trigger,
    dryRun: data.dryRun,
    parameters: data.parameters,
    scheduledAt: data.scheduledAt,
    deliveries,
  };
}

/**
 * How many times workers started the run: BullMQ's count of starts, less the pickups that only
 * found the job's previous run still going (`overlap: queue`) or an earlier execution of the run
 * still holding its lease, and less the pickup that failed an abandoned run (BullMQ counts that
 * one as a start too).
 */
export function deliveriesOf(delivery: RunDelivery, { abandoned = false } = {}): number {
  const waits = (delivery.data.overlapWaits ?? 0) + (delivery.data.leaseWaits ?? 0);
  return Math.max(1, delivery.attemptsStarted - (abandoned ? 1 : 0) - waits);
}

/** What a finished run's BullMQ job keeps of its summary. */
export function runJobResult(summary: RunSummary): RunJobResult {
  return { runId: summary.runId, outcome: summary.outcome, counts: summary.counts };
}

/**
 * One id per job and tick (`nightly-pause@20261122T190000.000Z`), so every scheduler that sees
 * the tick enqueues the same id and only the first enqueue counts. BullMQ refuses `:` in ids,
 * hence the basic ISO format.
 */
export function scheduledRunId(job: string, at: Date): string {
  return `${job}@${compactInstant(at)}`;
}

/** An instant in basic ISO format (`20261122T190000.000Z`): sortable, and free of `:`. */
export function compactInstant(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '');
}

/** The BullMQ job id of part `index` of run `runId`: the same on every enqueue, so enqueuing again is a no-op. */
export function partJobId(runId: string, index: number): string {
  return `${runId}#${index}`;
}

/** The queue id of a run's delivery for one step of its approval's round (its own id is its tick's). */
export function approvalJobId(runId: string, round: number, step: 'act' | 'expire'): string {
  return `${runId}#approval-${round}-${step}`;
}

export function manualRunId(job: string): string {
  return `${job}@manual-${randomUUID()}`;
}

/**
 * BullMQ's key prefix for nightshift's `prefix`. On a Redis Cluster it is a hash tag,
 * `{<prefix>}`: BullMQ's scripts touch several of a queue's keys at once, which a Cluster allows
 * only within one slot. A standalone or Sentinel Redis keeps the bare prefix, so the queue of an
 * existing installation stays where it is (moving to a Cluster moves the queue's keys: drain it
 * first).
 */
export function queuePrefix(connection: RedisConnection, prefix: string): string {
  return connection.isCluster ? `{${prefix}}` : prefix;
}

/** How many finished runs BullMQ itself keeps by default (RunQueueOptions.keepFinished). */
const KEEP_FINISHED = 1_000;

export interface RunQueueOptions {
  connection: RedisConnection;
  /** nightshift's key prefix; BullMQ's follows from it (`queuePrefix`). */
  prefix: string;
  /** How many finished runs BullMQ itself keeps (the run history keeps summaries). Default 1000. */
  keepFinished?: number;
}

export function createRunQueue(options: RunQueueOptions): Queue<RunJobData, RunJobResult> {
  return new BullMQ.Queue<RunJobData, RunJobResult>(RUN_QUEUE, {
    connection: options.connection,
    prefix: queuePrefix(options.connection, options.prefix),
    defaultJobOptions: {
      // the run history keeps summaries; BullMQ's own records only need to outlive the dashboard's interest
      removeOnComplete: { age: 24 * 3600, count: options.keepFinished ?? KEEP_FINISHED },
      removeOnFail: { age: 7 * 24 * 3600, count: options.keepFinished ?? KEEP_FINISHED },
    },
  });
}

/** How long a tick's id stays claimed after it was enqueued, whatever became of its job. */
export const TICK_DEDUP_TTL_MS = 7 * 24 * 3600_000;

/** Enqueues a run; a second enqueue of the same run id within the dedup window is a no-op. */
export async function enqueueRuns(
  queue: Queue<RunJobData, RunJobResult>,
  runs: readonly RunJobData[],
): Promise<void> {
  await queue.addBulk(
    runs.map((data) => ({
      name: data.job,
      data,
      opts: { jobId: data.runId, deduplication: { id: data.runId, ttl: TICK_DEDUP_TTL_MS } },
    })),
  );
}
