import type { Settings } from '../config/index.js';
import { executeRun, MemoryCheckpointStore, nodeActionIo, type RunSummary } from '../engine/index.js';
import { InMemoryNotificationMemory, Notifier } from '../notify/index.js';
import type { Policy, PolicyJob } from '../policy/index.js';
import { manualRunId } from '../queue/index.js';
import { actionApiClient, actions, apiSettings, cliLogger, redisFleetState } from './runtime.js';

/**
 * Runs jobs in this process, without a queue, through the same action code a worker uses. With
 * REDIS_URL set, runs read holds and record ownership in Redis as a worker's runs do (a plan only
 * reads), and `NIGHTSHIFT_API_RATE_LIMIT` takes its tokens from the bucket the workers share;
 * without it, this process keeps the limit by itself. Nothing else is written to Redis.
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
export function inlineRunner(settings: Settings, jobs: readonly PolicyJob[]): InlineRunner {
  const log = cliLogger(settings, 'stderr');
  const credentials = apiSettings(settings, jobs);
  const fleetState = redisFleetState(settings, log);
  const api = actionApiClient(settings, credentials, log, fleetState?.redis);
  // without Redis there is no memory of earlier runs: every finding is new, nothing "recovers"
  const notifier = new Notifier({ memory: new InMemoryNotificationMemory(), log });
  const abort = new AbortController();
  const onSignal = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  return {
    async run(policy, job, dryRun, onProgress) {
      const summary = await executeRun(
        {
          api,
          io: nodeActionIo({ environment: settings.environment, sinkCommands: settings.sinks.commands }),
          actions,
          checkpoints: new MemoryCheckpointStore(),
          log,
          signal: abort.signal,
          pollIntervalMs: settings.worker.pollIntervalMs,
          onProgress,
          state: fleetState?.state,
        },
        { runId: manualRunId(job.name), job, trigger: 'manual', dryRun, pricing: policy.pricing },
      );
      await notifier.notify(policy.notifications, job, summary);
      return summary;
    },
    async close() {
      process.off('SIGINT', onSignal);
      fleetState?.close();
      await notifier.close();
      await api.close();
    },
  };
}
