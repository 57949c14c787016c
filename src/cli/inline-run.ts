import type { Redis } from 'ioredis';
import type { Logger } from '../log/logger.js';
import { InMemoryNotificationMemory, Notifier } from '../notify/index.js';
import type { Policy, PolicyJob } from '../policy/index.js';
import { createRedis, reconnectDelay } from '../queue/redis.js';
import { manualRunId } from '../queue/run-queue.js';
import { executeRun, MemoryCheckpointStore, type RunSummary } from '../runs/index.js';
import { UsageError } from './exit.js';
import {
  actionApiClient,
  actions,
  apiSettings,
  cliLogger,
  envNumber,
  redisHistoryReader,
} from './runtime.js';

/**
 * Runs jobs in this process, without a queue, through the same action code a worker uses. With
 * REDIS_URL set, actions that go by earlier runs (`resume` with `onlyPausedBy`) read the run
 * history there, and `NIGHTSHIFT_API_RATE_LIMIT` takes its tokens from the bucket the workers
 * share; without it, this process keeps the limit by itself. Nothing else is written to Redis.
 */
export interface InlineRunner {
  /**
   * Runs the job and sends its summary to the job's notification sinks (a dry run sends nothing);
   * `onProgress` hears of every target done.
   */
  run(
    policy: Policy,
    job: PolicyJob,
    dryRun: boolean,
    onProgress?: (done: number, total: number) => void,
  ): Promise<RunSummary>;
  close(): Promise<void>;
}

/** `jobs`: what will run, so a credential one of them needs is asked for before anything starts. */
export function inlineRunner(jobs: readonly PolicyJob[]): InlineRunner {
  const log = cliLogger('stderr');
  const limitRedis = rateLimitRedis(log);
  const api = actionApiClient(apiSettings(jobs), log, limitRedis);
  // without Redis there is no memory of earlier runs: every finding is new, nothing "recovers"
  const notifier = new Notifier({ memory: new InMemoryNotificationMemory(), log });
  const history = redisHistoryReader();
  const abort = new AbortController();
  const onSignal = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  return {
    async run(policy, job, dryRun, onProgress) {
      const summary = await executeRun(
        {
          api,
          actions,
          checkpoints: new MemoryCheckpointStore(),
          log,
          signal: abort.signal,
          pollIntervalMs: envNumber('NIGHTSHIFT_POLL_INTERVAL_MS', 5_000),
          onProgress,
          history: history?.history,
        },
        { runId: manualRunId(job.name), job, trigger: 'manual', dryRun },
      );
      await notifier.notify(policy.notifications, job, summary);
      return summary;
    },
    async close() {
      process.off('SIGINT', onSignal);
      history?.close();
      await notifier.close();
      await api.close();
      limitRedis?.disconnect();
    },
  };
}

/**
 * The connection to the API rate limit's shared bucket: only with both REDIS_URL and
 * NIGHTSHIFT_API_RATE_LIMIT set. It gives up after a few tries, as the other one-shot commands'
 * connections do, so an unreachable Redis fails the calls with its reason instead of holding them.
 */
function rateLimitRedis(log: Logger): Redis | undefined {
  const url = process.env.REDIS_URL;
  if (!url || !process.env.NIGHTSHIFT_API_RATE_LIMIT) return undefined;
  try {
    return createRedis({
      url,
      log,
      role: 'rate-limit',
      maxRetriesPerRequest: 1,
      connectTimeout: 3_000,
      retryStrategy: (attempt: number) => (attempt > 2 ? null : reconnectDelay(attempt)),
    });
  } catch (error) {
    throw new UsageError(`REDIS_URL: ${(error as Error).message}`);
  }
}
