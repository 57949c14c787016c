import type { Logger } from '../log/logger.js';
import type { StepContext, StepResult, TargetRef } from './action.js';
import { callScope } from './call-scope.js';
import type { CheckpointStore } from './checkpoint.js';
import { AttemptsFailedError, type RetryPolicy, withRetries } from './retry.js';
import { errorRecord, type Finding, type TargetRecord } from './summary.js';

export interface TargetRunnerOptions {
  runId: string;
  concurrency: number;
  retry: RetryPolicy;
  checkpoints: CheckpointStore;
  /** Records already final in an earlier delivery of this run. */
  done: ReadonlyMap<string, TargetRecord>;
  log: Logger;
  signal: AbortSignal;
  onRecord: (record: TargetRecord) => void;
}

/**
 * Runs one step per target with bounded concurrency. Each target is retried on its own: a
 * retryable API error waits (exponential backoff with jitter, at least the server's Retry-After)
 * and tries again up to the job's attempts; anything else fails that target at once. A finished
 * target is checkpointed before the next one starts, and one that finished in an earlier
 * delivery of the run is not run again.
 */
export async function runTargets<T>(
  options: TargetRunnerOptions,
  items: readonly T[],
  ref: (item: T) => TargetRef,
  step: (item: T, context: StepContext) => Promise<StepResult>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      options.signal.throwIfAborted();
      const item = items[next++] as T;
      const target = ref(item);
      const previous = options.done.get(target.key);
      if (previous) {
        options.onRecord(previous);
        continue;
      }
      const record = await runOne(options, target, (context) => step(item, context));
      await options.checkpoints.save(options.runId, record);
      options.onRecord(record);
    }
  };
  const lanes = Math.max(1, Math.min(options.concurrency, items.length));
  await Promise.all(Array.from({ length: lanes }, lane));
}

async function runOne(
  options: TargetRunnerOptions,
  target: TargetRef,
  step: (context: StepContext) => Promise<StepResult>,
): Promise<TargetRecord> {
  const started = performance.now();
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
  let attempts = 0;
  let findings: Finding[] = [];
  try {
    const { value: result } = await withRetries(
      options.retry,
      options.signal,
      (attempt) => {
        attempts = attempt;
        findings = [];
        return callScope.run({ log, requestIds, attempt, findings }, () =>
          step({ attempt, signal: options.signal, log }),
        );
      },
      (attempt, delayMs, error) =>
        log.warn({ attempt, delayMs, err: error.toJSON() }, 'target attempt failed; retrying'),
    );
    // debug: the API call lines already say what happened to the target, and the summary keeps it
    log.debug({ outcome: result.outcome, reason: result.reason, attempts }, 'target done');
    return {
      ...base,
      outcome: result.outcome,
      attempts,
      reason: result.reason,
      detail: result.detail,
      ...(findings.length > 0 ? { findings } : {}),
      durationMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    if (!(error instanceof AttemptsFailedError)) throw error;
    log.error({ attempts, err: errorRecord(error.cause) }, 'target failed');
    return {
      ...base,
      outcome: 'failed',
      attempts,
      error: errorRecord(error.cause),
      durationMs: Math.round(performance.now() - started),
    };
  }
}
