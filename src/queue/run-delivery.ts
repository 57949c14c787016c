import type { LeaseExpiredError, RunRequest, RunSummary } from '../engine/index.js';
import type { Logger } from '../log/index.js';
import { type ExecutionLease, isRedisUnreachable } from '../store/index.js';
import { BullMQ } from './bullmq.js';
import type { RunPolicy } from './policy-cache.js';
import type { Admission } from './run-gate.js';
import { deliveriesOf, type RunDelivery, type RunJobData, runIdentity } from './run-queue.js';
import type { RunRecorder } from './run-recorder.js';

/** A delivery as a worker took it: the delivery itself, the token to move it with, its data, its log. */
export interface TakenDelivery {
  delivery: RunDelivery;
  token: string | undefined;
  data: RunJobData;
  log: Logger;
}

/** The soonest a delivery that found its lease held looks again. */
const LEASE_RETRY_MIN_MS = 100;

/**
 * Puts a delivery back in the queue until an earlier execution's lease can have run out, counted
 * so that waiting is not reported as being delivered again and again.
 */
export async function waitForLease(
  { delivery, token, data, log }: TakenDelivery,
  heldForMs: number,
): Promise<never> {
  await delivery.updateData({ ...data, leaseWaits: (data.leaseWaits ?? 0) + 1 });
  // BullMQ promotes delayed jobs by its own reading of the system's time, not the worker's clock
  await delivery.moveToDelayed(Date.now() + Math.max(heldForMs, LEASE_RETRY_MIN_MS), token);
  log.info(
    { part: data.part?.index, retryInMs: heldForMs },
    'delivered again while an earlier execution holds its lease: waiting for that execution to end',
  );
  throw new BullMQ.DelayedError();
}

/**
 * An execution whose lease ran out has stopped acting: it says so, gives its lease up (the next
 * execution need not wait out a lease this one no longer uses; said first, so the logs order the
 * two executions as they were), and its run (or part) goes back to the queue for the next
 * execution to resume from its checkpoints, not failed.
 */
export async function handBackAfterLease(
  { delivery, token, data, log }: TakenDelivery,
  reason: LeaseExpiredError,
  release: () => Promise<void>,
): Promise<never> {
  log.warn(
    { part: data.part?.index, reason: reason.message },
    'run stopped: its lease ran out unconfirmed; the next delivery resumes it from its checkpoints',
  );
  await release();
  await delivery.moveToWait(token).catch(() => {
    // BullMQ has handed the delivery on already (its claim ran out too): nothing to give back
  });
  throw new BullMQ.WaitingError();
}

/** A delivery cut short by shutdown goes back to the queue, not failed, for another worker to resume. */
export async function handBackAtShutdown({ delivery, token, data, log }: TakenDelivery): Promise<never> {
  await delivery.moveToWait(token);
  if (data.part)
    log.warn(
      { part: data.part.index, progress: delivery.progress },
      'run part handed back to the queue at shutdown',
    );
  else log.warn({ progress: delivery.progress }, 'run handed back to the queue at shutdown');
  throw new BullMQ.WaitingError();
}

/**
 * Renews the job's run lock with the execution's lease. A worker stalled past the run lock's TTL
 * may find another run of the job holding it: this run (or part of it) then stops before its next
 * call, so two runs of one job never act at once (a pause landing after the resume that followed
 * it would strand the workspace until the next edge).
 */
export function guardJobLock(lease: ExecutionLease, data: RunJobData, log: Logger): void {
  lease.guardLock(data.job, data.runId, (holder) => {
    log.error({ holder: holder || undefined }, 'run lock lost to another run: run stopped');
    return new BullMQ.UnrecoverableError(
      `stopped: the run lock of job "${data.job}" is held by ${holder ? `run ${holder}` : 'another run'}; this worker was stalled past it, and two runs of one job never act at once`,
    );
  });
}

/**
 * Records a run the gate did not let start: skipped, for a tick; failed, for a run an earlier
 * execution began (it is no tick to skip: it stopped mid-way, and says so).
 */
export async function recordSkip(
  recorder: RunRecorder,
  { delivery, data, log }: TakenDelivery,
  action: string,
  { reason, message }: Extract<Admission, { verdict: 'skip' }>,
): Promise<RunSummary> {
  const deliveries = deliveriesOf(delivery);
  if (deliveries <= 1) {
    const skipped = await recorder.skipped(runIdentity(data, action), reason);
    log.info({ outcome: 'skipped' }, message);
    return skipped;
  }
  const stopped = `stopped after its execution was interrupted: ${reason.replace(/^skipped: /, '')}`;
  await recorder.stopped(runIdentity(data, action, deliveries), recorder.now(), stopped);
  log.warn({ outcome: 'failed' }, stopped);
  throw new BullMQ.UnrecoverableError(stopped);
}

/** What a run and each of its parts hand the engine alike. */
export function runRequest(
  delivery: RunDelivery,
  data: RunJobData,
  { policy, job: policyJob }: RunPolicy,
): RunRequest {
  return {
    runId: data.runId,
    job: policyJob,
    trigger: data.trigger,
    scheduledAt: data.scheduledAt ? new Date(data.scheduledAt) : undefined,
    // a job the signed policy makes a dry run stays one, whatever a run's data in Redis says
    dryRun: data.dryRun || policyJob.dryRun,
    parameters: data.parameters,
    deliveries: deliveriesOf(delivery),
    pricing: policy.pricing,
  };
}

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);

/** BullMQ's words when a worker finishes a job whose claim has moved on to another delivery. */
const LOST_DELIVERY = /^(Missing lock|Lock mismatch) for job /;

/**
 * How a worker reports its BullMQ errors: connection failures at debug (the Redis client reports
 * each outage once, as a warning), Sentinels or a cluster that cannot name a Redis to talk to
 * included; a run finished after its delivery moved on as a warning; the rest as errors.
 */
export function workerErrorHandler(log: Logger): (error: Error) => void {
  return (error) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code && CONNECTION_ERRORS.has(code)) log.debug({ code }, 'worker lost Redis');
    else if (isRedisUnreachable(error)) log.debug({ err: error.message }, 'worker lost Redis');
    else if (LOST_DELIVERY.test(error.message))
      log.warn(
        { err: error.message },
        'a run ended after BullMQ had handed its delivery on (Redis was unreachable past its claim); the next delivery reports the run’s summary',
      );
    else log.error({ err: error }, 'worker error');
  };
}
