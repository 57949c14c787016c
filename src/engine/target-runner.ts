import type { Logger } from '../log/index.js';
import type { Clock } from '../time/index.js';
import type { StepContext, StepResult, TargetRef } from './action.js';
import { releaseKept } from './call-gate.js';
import { callScope, type TargetCalls } from './call-scope.js';
import { type CheckpointStore, progressRecord } from './checkpoint.js';
import { AttemptsFailedError, logWaits, type RetryPolicy, type RetryWait, withRetries } from './retry.js';
import { PIPELINE_DEPTH, RunGates } from './run-slots.js';
import { errorRecord, type TargetRecord } from './summary.js';

export interface TargetRunnerOptions {
  runId: string;
  concurrency: number;
  retry: RetryPolicy;
  clock: Clock;
  checkpoints: CheckpointStore;
  /**
   * The run's slots, shared with its other parts on this worker: a lane takes one before each
   * target (`RunGates`). Default: the execution's own.
   */
  slots?: RunGates | undefined;
  /** This execution's rank for the slots (`RunSlots.take`): its part's index. Default 0. */
  slotRank?: number | undefined;
  /**
   * Each step is a few API calls with Redis writes around them and never waits for the platform
   * (a pause): up to PIPELINE_DEPTH × `concurrency` targets go at once, each call taking a call
   * slot of its own, so the writes of some overlap the calls of others and no more than
   * `concurrency` calls are in flight. Otherwise a target holds its call slot throughout (a drill's
   * waits hold it too). Default false.
   */
  pipelined?: boolean | undefined;
  /** Records already final in an earlier delivery of this run. */
  done: ReadonlyMap<string, TargetRecord>;
  log: Logger;
  signal: AbortSignal;
  /**
   * Aborted when the run is cancelled: no lane takes another target, the targets under way finish,
   * then this rejects with the signal's reason if targets were left. Default: none.
   */
  halt?: AbortSignal | undefined;
  onRecord: (record: TargetRecord) => void;
}

/**
 * Runs one step per target with bounded concurrency. Each target is retried on its own: a
 * retryable API error waits (exponential backoff with jitter, at least the server's Retry-After)
 * and tries again up to the job's attempts; a throttled call waits as the server says and tries
 * again without counting an attempt; anything else fails that target at once. A finished target
 * is checkpointed before the next one starts, and one that finished in an earlier delivery of the
 * run is not run again; one under way keeps its action's progress record in the checkpoint. Once a lane fails (or the run is aborted) no lane takes another target,
 * and this settles only when every lane has stopped, so a summary built next sees every record.
 * Resolves with the targets' records, those an earlier delivery finished included.
 */
export async function runTargets<T>(
  options: TargetRunnerOptions,
  items: readonly T[],
  ref: (item: T) => TargetRef,
  step: (item: T, context: StepContext) => Promise<StepResult>,
): Promise<TargetRecord[]> {
  let next = 0;
  let stopped = false;
  const records: TargetRecord[] = [];
  const gates = options.slots ?? new RunGates(options.concurrency);
  const depth = options.pipelined ? PIPELINE_DEPTH : 1;
  const slots = options.pipelined ? gates.targets : gates.calls;
  const calls = options.pipelined ? gates.calls : undefined;
  const lane = async () => {
    while (!stopped && next < items.length) {
      options.signal.throwIfAborted();
      if (options.halt?.aborted) return;
      const item = items[next++] as T;
      const target = ref(item);
      const previous = options.done.get(target.key);
      if (previous) {
        records.push(previous);
        options.onRecord(previous);
        continue;
      }
      const release = await slots.take(options.slotRank);
      try {
        const record = await runOne(
          options,
          target,
          calls && { slots: calls, rank: options.slotRank },
          (context) => step(item, context),
        );
        await options.checkpoints.save(options.runId, record);
        records.push(record);
        options.onRecord(record);
      } finally {
        release();
      }
    }
  };
  const lanes = Math.max(1, Math.min(options.concurrency * depth, items.length));
  const settled = await Promise.allSettled(
    Array.from({ length: lanes }, () =>
      lane().catch((error: unknown) => {
        stopped = true;
        throw error;
      }),
    ),
  );
  const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
  if (next < items.length) options.halt?.throwIfAborted();
  return records;
}

async function runOne(
  options: TargetRunnerOptions,
  target: TargetRef,
  calls: TargetCalls | undefined,
  step: (context: StepContext) => Promise<StepResult>,
): Promise<TargetRecord> {
  const started = options.clock.monotonic();
  const requestIds: string[] = [];
  const log = options.log.child({
    target: target.key,
    workgroupId: target.workgroupId,
    workspaceId: target.workspaceId,
  });
  const base = {
    key: target.key,
    workgroupId: target.workgroupId,
    workgroupName: target.workgroupName,
    workspaceId: target.workspaceId,
    workspaceName: target.workspaceName,
    requestIds,
  };
  const progress = progressRecord(options.checkpoints, options.runId, target.key, log);
  let lastWait: RetryWait | undefined;
  let waiting = false;
  const logWait = logWaits(log, 'target attempt failed; retrying');
  try {
    const {
      value: result,
      attempts,
      throttled,
    } = await withRetries(
      options.retry,
      options.signal,
      async (attempt) => {
        waiting = false;
        return callScope.run({ log, requestIds, attempt, calls }, () =>
          step({ attempt, signal: options.signal, log, progressRecord: progress }),
        );
      },
      (wait) => {
        lastWait = wait;
        waiting = true;
        logWait(wait);
      },
      options.clock,
    );
    for (const id of result.earlierRequestIds ?? []) if (!requestIds.includes(id)) requestIds.unshift(id);
    // debug: the API call lines already say what happened to the target, and the summary keeps it
    log.debug({ outcome: result.outcome, reason: result.reason, attempts, throttled }, 'target done');
    return {
      ...base,
      outcome: result.outcome,
      attempts,
      ...(throttled > 0 ? { throttled } : {}),
      reason: result.reason,
      detail: result.detail,
      ...(result.status ? { status: result.status } : {}),
      ...(result.findings?.length ? { findings: [...result.findings] } : {}),
      durationMs: Math.round(options.clock.monotonic() - started),
    };
  } catch (error) {
    if (options.signal.aborted) {
      // Cut short by the end of the run (its timeout, or a shutdown) after the API throttled it:
      // the record says what throttling cost. It is not checkpointed: after a shutdown the run is
      // picked up again and the target tried anew.
      if (lastWait && lastWait.throttled > 0)
        options.onRecord(cutShort(base, lastWait, waiting, Math.round(options.clock.monotonic() - started)));
      throw error;
    }
    if (!(error instanceof AttemptsFailedError)) throw error;
    log.error(
      { attempts: error.attempts, throttled: error.throttled, err: errorRecord(error.cause) },
      'target failed',
    );
    return {
      ...base,
      outcome: 'failed',
      attempts: error.attempts,
      ...(error.throttled > 0 ? { throttled: error.throttled } : {}),
      error: errorRecord(error.cause),
      durationMs: Math.round(options.clock.monotonic() - started),
    };
  } finally {
    if (calls) releaseKept(calls);
  }
}

/**
 * The record of a throttled target its run ended before it finished: still waiting out a throttle,
 * or in the try after one.
 */
function cutShort(
  base: Omit<TargetRecord, 'outcome' | 'attempts'>,
  wait: RetryWait,
  waiting: boolean,
  durationMs: number,
): TargetRecord {
  const tries = `${wait.throttled} throttled ${wait.throttled === 1 ? 'try' : 'tries'}`;
  const throttledNow = waiting && wait.throttle;
  const last = errorRecord(wait.error);
  return {
    ...base,
    outcome: 'failed',
    // a try under way when the run ended was an attempt, though it never came to an end
    attempts: wait.attempts + (waiting ? 0 : 1),
    throttled: wait.throttled,
    error: throttledNow
      ? { ...last, message: `still throttled when the run ended, after ${tries}: ${last.message}` }
      : { message: `the run ended during try ${wait.attempt + 1}, after ${tries}` },
    durationMs,
  };
}
