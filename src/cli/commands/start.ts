import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import { opsSettings, startOpsRole } from '../ops.js';
import { loadOrReport, policyCommandDeps, policyVariables } from '../policy-io.js';
import { bearerTokenProblems, PolicyStatus } from '../policy-reload.js';
import {
  apiSettings,
  cliLogger,
  exitOnceIdle,
  exitWithin,
  policyInForceStored,
  processPolicyKeyring,
  redisRuntime,
  unlessStopped,
  untilSignal,
} from '../runtime.js';
import { notStarting, refuseToStart, startSchedulerRole } from './scheduler.js';
import { startWorkerRole, workerShutdown } from './worker.js';

export function registerStartCommand(program: Command, settings: Settings): void {
  program
    .command('start <policy>')
    .description('run the scheduler and a worker in one process')
    .addHelpText(
      'after',
      '\nServes the console (/), /healthz, /readyz, /metrics and the queue dashboard (/ui) on NIGHTSHIFT_HTTP_HOST:NIGHTSHIFT_HTTP_PORT\n(default 127.0.0.1:9464, or the next free port to 9473 when another role has it; off for none);\nNIGHTSHIFT_UI_TOKEN guards the console, /metrics and /ui and is required beyond loopback.\n\nExample:\n  REDIS_URL=redis://127.0.0.1:6379 NIGHTSHIFT_API_URL=https://api.example NIGHTSHIFT_API_KEY_FILE=/run/secrets/key \\\n    nightshift start config/policy.yaml',
    )
    .action(async (file: string) => {
      // listening before anything starts: a signal that comes early must stop, not kill, the process
      const signalled = untilSignal();
      const ops = opsSettings(settings);
      const log = cliLogger(settings, 'stdout');
      const keyring = processPolicyKeyring(settings, log);
      // a file with problems may still start on the policy in force in Redis (startSchedulerRole)
      const policy = await loadOrReport(file, policyCommandDeps(settings));
      if (!policy) {
        const why = await policyInForceStored(settings, keyring);
        if (why) return refuseToStart(file, why);
        process.exitCode = undefined;
      }
      const { bearerToken } = apiSettings(settings, policy?.jobs ?? []);
      const runtime = redisRuntime(settings, log, 'start', { keyring });
      const status = new PolicyStatus(file);
      const server = await startOpsRole(ops, runtime, log, {
        variables: policyVariables(settings),
        sinkCommands: settings.sinks.commands,
        ready: () => ({ policy: status.readiness() }),
      }).catch(async (error: unknown) => {
        await runtime.close();
        throw error;
      });
      const stopWorker = startWorkerRole(settings, runtime, log.child({ role: 'worker' }), {
        metrics: server.metrics,
      });
      const stopScheduler = await unlessStopped(
        startSchedulerRole(settings, file, runtime, log.child({ role: 'scheduler' }), {
          metrics: server.metrics,
          status,
          // this process runs the jobs too: a reload adding one it could not run is refused
          check: bearerToken ? undefined : bearerTokenProblems,
        }),
        signalled,
      ).catch(async (error: unknown) => {
        await stopWorker();
        await server.close();
        await runtime.close();
        throw notStarting(file, error);
      });
      const signal = await signalled;
      exitWithin(workerShutdown(settings, runtime).limitMs, log);
      log.info({ signal }, 'stopping: no new ticks, finishing runs in flight');
      // side by side: the scheduler's wait for a batch of ticks must not add to the worker's grace
      await Promise.all([stopScheduler?.(), stopWorker()]);
      await server.close();
      await runtime.close();
      exitOnceIdle();
    });
}
