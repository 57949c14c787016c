import type { Command } from 'commander';
import { opsSettings, startOpsRole } from '../ops.js';
import { loadOrReport, policyCommandDeps } from '../policy-io.js';
import { apiSettings, cliLogger, redisRuntime, untilSignal } from '../runtime.js';
import { startSchedulerRole } from './scheduler.js';
import { startWorkerRole } from './worker.js';

export function registerStartCommand(program: Command): void {
  program
    .command('start <policy>')
    .description('run the scheduler and a worker in one process')
    .addHelpText(
      'after',
      '\nExample:\n  REDIS_URL=redis://127.0.0.1:6379 NIGHTSHIFT_API_URL=https://api.example NIGHTSHIFT_API_KEY_FILE=/run/secrets/key \\\n    nightshift start config/policy.yaml',
    )
    .action(async (file: string) => {
      apiSettings();
      const ops = opsSettings();
      if (!(await loadOrReport(file, policyCommandDeps()))) return;
      const log = cliLogger('stdout');
      const runtime = redisRuntime(log, 'start');
      let policyLoaded = false;
      const server = await startOpsRole(ops, runtime, log, () => ({
        policy: policyLoaded ? { ok: true } : { ok: false, reason: `${file} not loaded yet` },
      })).catch(async (error: unknown) => {
        await runtime.close();
        throw error;
      });
      const stopWorker = startWorkerRole(runtime, log.child({ role: 'worker' }), { metrics: server.metrics });
      const stopScheduler = await startSchedulerRole(file, runtime, log.child({ role: 'scheduler' }));
      policyLoaded = true;
      const signal = await untilSignal();
      log.info({ signal }, 'stopping: no new ticks, finishing runs in flight');
      await stopScheduler();
      await stopWorker();
      await server.close();
      await runtime.close();
    });
}
