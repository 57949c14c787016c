import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../ops/index.js';
import { formatProblem, PolicyError, parsePolicy } from '../../policy/index.js';
import { watchPolicy } from '../../scheduler/policy-watcher.js';
import { Scheduler } from '../../scheduler/scheduler.js';
import { opsSettings, startOpsRole } from '../ops.js';
import { loadOrReport, policyCommandDeps } from '../policy-io.js';
import {
  actionRegistry,
  cliLogger,
  envNumber,
  exitOnceIdle,
  exitWithin,
  type RedisRuntime,
  redisRuntime,
  SHUTDOWN_LIMIT_MS,
  unlessStopped,
  untilSignal,
} from '../runtime.js';

/** Starts the scheduler role on a runtime; resolves to a function that stops it. */
export async function startSchedulerRole(
  file: string,
  runtime: RedisRuntime,
  log: Logger,
  { metrics }: { metrics?: Metrics | undefined } = {},
): Promise<() => Promise<void>> {
  const scheduler = new Scheduler({
    redis: runtime.redis,
    prefix: runtime.prefix,
    queue: runtime.queue,
    policies: runtime.policies,
    history: runtime.history,
    suspensions: runtime.suspensions,
    log,
    leadMs: envNumber('NIGHTSHIFT_SCHEDULE_LEAD_MS', 2000),
    onRecorded: metrics ? (summary) => metrics.runFinished(summary) : undefined,
  });
  const text = await readFile(file, 'utf8');
  await scheduler.load(parsePolicy(text, file, { registry: actionRegistry, env: process.env }), text);
  await scheduler.start();
  let wasDown = false;
  const onError = () => {
    wasDown = true;
  };
  const onReady = () => {
    if (!wasDown) return;
    wasDown = false;
    scheduler
      .catchUp()
      .catch((error: unknown) => log.error({ err: error }, 'catch-up after reconnect failed'));
  };
  runtime.redis.on('error', onError);
  runtime.redis.on('ready', onReady);
  const stopWatching = watchPolicy(file, async (next) => {
    try {
      await scheduler.load(parsePolicy(next, file, { registry: actionRegistry, env: process.env }), next);
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      log.error(
        { problems: error.problems.map(formatProblem) },
        'new policy is invalid; keeping the last good one',
      );
    }
  });
  log.info({ jobs: scheduler.upcoming() }, 'scheduler started');
  return async () => {
    stopWatching();
    // Redis coming back while the process stops must not start a catch-up behind the stop
    runtime.redis.off('error', onError);
    runtime.redis.off('ready', onReady);
    await scheduler.stop();
  };
}

export function registerSchedulerCommand(program: Command): void {
  program
    .command('scheduler <policy>')
    .description('run the scheduler role: turn each tick of the policy into one run on the queue')
    .addHelpText(
      'after',
      [
        '',
        'Needs only REDIS_URL: workers make the API calls. Run as many replicas as you like; each tick',
        'still becomes one run. The policy is reloaded when the file changes (an invalid edit is logged',
        'and the last good policy kept), also on SIGHUP. Serves /healthz, /readyz, /metrics and the dashboard (/ui)',
        'on NIGHTSHIFT_HTTP_HOST:NIGHTSHIFT_HTTP_PORT (default 127.0.0.1:9464, or the next free port to 9473) like start and worker.',
        '',
        'Examples:',
        '  REDIS_URL=redis://127.0.0.1:6379 nightshift scheduler config/policy.yaml',
        '  NIGHTSHIFT_LOG_FORMAT=pretty nightshift scheduler config/examples/simulator.yaml',
      ].join('\n'),
    )
    .action(async (file: string) => {
      // listening before anything starts: a signal that comes early must stop, not kill, the process
      const signalled = untilSignal();
      if (!(await loadOrReport(file, policyCommandDeps()))) return;
      const ops = opsSettings();
      const log = cliLogger('stdout', { role: 'scheduler' });
      const runtime = redisRuntime(log, 'scheduler');
      let policyLoaded = false;
      const server = await startOpsRole(ops, runtime, log, () => ({
        policy: policyLoaded ? { ok: true } : { ok: false, reason: `${file} not loaded yet` },
      })).catch(async (error: unknown) => {
        await runtime.close();
        throw error;
      });
      const stop = await unlessStopped(
        startSchedulerRole(file, runtime, log, { metrics: server.metrics }),
        signalled,
      );
      policyLoaded = stop !== undefined;
      const signal = await signalled;
      exitWithin(SHUTDOWN_LIMIT_MS, log);
      log.info(
        { signal },
        stop ? 'scheduler stopping' : 'scheduler stopping before it started (Redis unreachable?)',
      );
      await stop?.();
      await server.close();
      await runtime.close();
      exitOnceIdle();
    });
}
