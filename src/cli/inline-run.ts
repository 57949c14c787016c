import type { Settings } from '../config/index.js';
import { executeRun, MemoryCheckpointStore, nodeActionIo, type RunSummary } from '../engine/index.js';
import { InMemoryNotificationMemory, Notifier, RedisNotificationMemory } from '../notify/index.js';
import type { Policy, PolicyJob, RunParameters } from '../policy/index.js';
import { keepRun, manualRunId, type RunKeeping } from '../queue/index.js';
import { FindingsLedger } from '../store/index.js';
import { actionApiClient, actions, apiSettings, cliLogger, redisFleetState, runHistory } from './runtime.js';

/**
 * Runs jobs in this process, without a queue, through the same action code a worker uses. With
 * REDIS_URL set, runs read holds and record ownership in Redis as a worker's runs do (a plan only
 * reads), `NIGHTSHIFT_API_RATE_LIMIT` takes its tokens from the bucket the workers share, sinks
 * hear of a finding once as from a worker's runs, and (with `keep`) each run is kept in the run
 * history and the findings ledger as a worker's is; without it, this process keeps the limit by
 * itself and nothing is written anywhere.
 */
export interface InlineRunner {
  /**
   * Runs the job and sends its summary to the job's notification sinks (a dry run sends nothing);
   * `onProgress` hears of every target done. `parameters`: what `job` was read with (`run --with`),
   * as typed, for the summary.
   */
  run(
    policy: Policy,
    job: PolicyJob,
    dryRun: boolean,
    onProgress?: (done: number, total: number) => void,
    parameters?: RunParameters,
  ): Promise<RunSummary>;
  close(): Promise<void>;
}

export interface InlineRunnerOptions {
  /**
   * Keep every run in Redis (when REDIS_URL is set) as a worker keeps its runs: `run --inline`
   * does, so a runbook's step leaves its trail in `history` and the console; `plan` does not.
   */
  keep?: boolean;
}

/** `jobs`: what will run, so a credential one of them needs is asked for before anything starts. */
export function inlineRunner(
  settings: Settings,
  jobs: readonly PolicyJob[],
  { keep = false }: InlineRunnerOptions = {},
): InlineRunner {
  const log = cliLogger(settings, 'stderr');
  const credentials = apiSettings(settings, jobs);
  const fleetState = redisFleetState(settings, log);
  const api = actionApiClient(settings, credentials, log, fleetState?.redis);
  const prefix = settings.redis.prefix;
  // without Redis there is no memory of earlier runs: every finding is new, nothing "recovers"
  const notifier = new Notifier({
    memory: fleetState
      ? new RedisNotificationMemory(fleetState.redis, { prefix })
      : new InMemoryNotificationMemory(),
    log,
    consoleUrl: settings.http.consoleUrl,
  });
  const keeping: RunKeeping | undefined =
    keep && fleetState
      ? {
          history: runHistory(fleetState.redis, settings),
          findings: new FindingsLedger(fleetState.redis, { prefix }),
          log,
        }
      : undefined;
  const abort = new AbortController();
  const onSignal = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  return {
    async run(policy, job, dryRun, onProgress, parameters) {
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
        { runId: manualRunId(job.name), job, trigger: 'manual', dryRun, parameters, pricing: policy.pricing },
      );
      // the run happened whatever Redis does now: its summary is still printed, its exit code its own
      if (keeping)
        await keepRun(keeping, summary).catch((error: unknown) =>
          log.warn(
            { err: error, runId: summary.runId },
            'the run could not be kept in the history in Redis: `history` and the console will not show it',
          ),
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
