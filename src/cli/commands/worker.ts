import type { Command } from 'commander';
import { ApiClient } from '../../api/index.js';
import { type Settings, type ShutdownBudget, shutdownBudget } from '../../config/index.js';
import { nodeActionIo } from '../../engine/index.js';
import type { Logger } from '../../log/index.js';
import { Notifier, RedisNotificationMemory } from '../../notify/index.js';
import type { Metrics } from '../../ops/index.js';
import { RunWorker } from '../../queue/index.js';
import { collectGarbage } from '../heap.js';
import { opsSettings, startOpsRole } from '../ops.js';
import { policyVariables } from '../policy-io.js';
import {
  actionApiClient,
  actionRegistry,
  actions,
  apiSettings,
  cliLogger,
  exitOnceIdle,
  exitWithin,
  type RedisRuntime,
  redisRuntime,
  requiredPolicyKeyring,
  untilSignal,
} from '../runtime.js';
import { resolveWorkerOptions, workerStores } from '../worker-wiring.js';

export interface WorkerRoleOptions {
  /** Counts runs and API calls for the ops server's /metrics. Default: none. */
  metrics?: Metrics;
}

/** The shutdown budget of a role with a worker, from Redis as it is now. */
export function workerShutdown(settings: Settings, runtime: RedisRuntime): ShutdownBudget {
  return shutdownBudget(settings, { ready: runtime.redis.status === 'ready' });
}

/** Starts the worker role on a runtime; resolves to a function that stops it within its grace period. */
export function startWorkerRole(
  settings: Settings,
  runtime: RedisRuntime,
  log: Logger,
  { metrics }: WorkerRoleOptions = {},
): () => Promise<void> {
  const credentials = apiSettings(settings);
  ApiClient.prepare();
  const api = actionApiClient(settings, credentials, log, runtime.redis, metrics);
  const notifier = new Notifier({
    memory: new RedisNotificationMemory(runtime.redis, { prefix: runtime.prefix }),
    log,
    consoleUrl: settings.http.consoleUrl,
  });
  const behaviour = resolveWorkerOptions(settings);
  const worker = new RunWorker({
    redis: runtime.redis,
    stores: workerStores({
      connection: runtime.stores,
      prefix: runtime.prefix,
      lockDurationMs: behaviour.lockDurationMs,
      starts: runtime.runStarts,
      log,
    }),
    prefix: runtime.prefix,
    api,
    actions,
    io: nodeActionIo({ environment: settings.environment, sinkCommands: settings.sinks.commands }),
    registry: actionRegistry,
    ...policyVariables(settings),
    policies: runtime.policies,
    history: runtime.history,
    checkpoints: runtime.checkpoints,
    checkSuspensions: true,
    state: runtime.state,
    notifier,
    metrics,
    log,
    ...behaviour,
  });
  // the start's garbage (the client's compiled checks among it) goes before the first run comes
  collectGarbage({ thorough: true });
  worker.start();
  log.info({ concurrency: settings.worker.concurrency }, 'worker started');
  return async () => {
    await worker.close(workerShutdown(settings, runtime).graceMs);
    await notifier.close();
    await api.close();
  };
}

export function registerWorkerCommand(program: Command, settings: Settings): void {
  program
    .command('worker')
    .description('run the worker role: take runs off the queue in Redis (REDIS_URL) and execute them')
    .addHelpText(
      'after',
      '\nRuns only policies signed with NIGHTSHIFT_POLICY_KEY, the key the schedulers and `nightshift run` sign with.\nServes the console (/), /healthz, /readyz, /metrics and the queue dashboard (/ui) on NIGHTSHIFT_HTTP_HOST:NIGHTSHIFT_HTTP_PORT\n(default 127.0.0.1:9464, or the next free port to 9473 when another role has it; off for none);\nNIGHTSHIFT_UI_TOKEN guards the console, /metrics and /ui and is required beyond loopback.\n\nExample:\n  REDIS_URL=redis://127.0.0.1:6379 NIGHTSHIFT_API_URL=… NIGHTSHIFT_API_KEY=… NIGHTSHIFT_POLICY_KEY_FILE=… nightshift worker',
    )
    .action(async () => {
      // listening before anything starts: a signal that comes early must stop, not kill, the process
      const signalled = untilSignal();
      apiSettings(settings);
      const keyring = requiredPolicyKeyring(
        settings,
        'a worker runs only policies signed with the key the schedulers and `nightshift run` sign with',
      );
      const ops = opsSettings(settings);
      const log = cliLogger(settings, 'stdout', { role: 'worker' });
      const runtime = redisRuntime(settings, log, 'worker', { keyring });
      const server = await startOpsRole(ops, runtime, log, {
        variables: policyVariables(settings),
        sinkCommands: settings.sinks.commands,
      }).catch(async (error: unknown) => {
        await runtime.close();
        throw error;
      });
      const stop = startWorkerRole(settings, runtime, log, { metrics: server.metrics });
      const signal = await signalled;
      exitWithin(workerShutdown(settings, runtime).limitMs, log);
      log.info({ signal }, 'worker stopping: finishing runs in flight');
      await stop();
      await server.close();
      await runtime.close();
      exitOnceIdle();
    });
}
