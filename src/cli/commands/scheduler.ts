import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { type Settings, SHUTDOWN_LIMIT_MS } from '../../config/index.js';
import { within } from '../../engine/index.js';
import type { Logger } from '../../log/index.js';
import { InMemoryNotificationMemory, Notifier, OverdueWatch } from '../../notify/index.js';
import type { Metrics } from '../../ops/index.js';
import { type Policy, PolicyError, type PolicyProblem } from '../../policy/index.js';
import { enqueueRuns } from '../../queue/index.js';
import { Scheduler, watchPolicy } from '../../scheduler/index.js';
import { LastTicks, OverdueEpisodes, RedisWindowStates } from '../../store/index.js';
import { systemClock } from '../../time/index.js';
import { UsageError } from '../exit.js';
import { collectGarbage } from '../heap.js';
import { opsSettings, startOpsRole } from '../ops.js';
import { loadOrReport, policyCommandDeps, policyVariables, sinkCommandProblems } from '../policy-io.js';
import { PolicyReloader, PolicyStatus } from '../policy-reload.js';
import {
  cliLogger,
  exitOnceIdle,
  exitWithin,
  policyInForceStored,
  type RedisRuntime,
  redisRuntime,
  requiredPolicyKeyring,
  unlessStopped,
  untilSignal,
} from '../runtime.js';

export interface SchedulerRoleOptions {
  /** Reports the policy in force and rejected reloads for /metrics. Default: none. */
  metrics?: Metrics | undefined;
  /** The policy's state, for /readyz. Default: one of the role's own. */
  status?: PolicyStatus;
  /**
   * Problems with jobs this process could not run, refused like an invalid edit on reload:
   * `start` (which runs them) passes `bearerTokenProblems` when it has no bearer token. Default: none.
   */
  check?: ((policy: Policy) => PolicyProblem[]) | undefined;
}

function collectAfterReload(): void {
  collectGarbage({ thorough: false });
}

/** How long a stopping scheduler waits for policy and overdue notifications being sent. */
const NOTICE_GRACE_MS = 2_000;

/** Starts the scheduler role on a runtime; resolves to a function that stops it. */
export async function startSchedulerRole(
  settings: Settings,
  file: string,
  runtime: RedisRuntime,
  log: Logger,
  { metrics, status, check }: SchedulerRoleOptions = {},
): Promise<() => Promise<void>> {
  const { redis, prefix, queue } = runtime;
  const scheduler = new Scheduler({
    lastTicks: new LastTicks(redis, { prefix }),
    windowStates: new RedisWindowStates(redis, { prefix }),
    enqueue: (runs) => enqueueRuns(queue, runs),
    policies: runtime.policies,
    history: runtime.history,
    suspensions: runtime.suspensions,
    log,
    clock: systemClock,
    leadMs: settings.scheduler.leadMs,
    onRecorded: metrics ? (summary) => metrics.runFinished(summary) : undefined,
  });
  // policy and overdue notices only: run notifications are the workers'
  const notifier = new Notifier({
    memory: new InMemoryNotificationMemory(),
    log,
    consoleUrl: settings.http.consoleUrl,
  });
  const reloader = new PolicyReloader({
    file,
    scheduler,
    status: status ?? new PolicyStatus(file),
    policies: runtime.policies,
    notifier,
    metrics,
    log,
    ...policyVariables(settings),
    // a job this machine could not run refuses the edit, like an invalid one
    check: (policy) => [...(check?.(policy) ?? []), ...sinkCommandProblems(policy, settings.sinks.commands)],
  });
  await reloader.load(await readFile(file, 'utf8'));
  // the start's garbage goes before the first tick is handled: the collection holds the process up
  collectGarbage({ thorough: true });
  await scheduler.start();
  const overdue = new OverdueWatch({
    policy: () => reloader.policy,
    lastRuns: () => runtime.history.lastRuns(),
    suspended: async () => new Set((await runtime.suspensions.all()).keys()),
    episodes: new OverdueEpisodes(redis, { prefix }),
    notifier,
    clock: systemClock,
    log,
  });
  overdue.start();
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
  // a reload leaves the garbage of a parse, as the start did
  const stopWatching = watchPolicy(file, (next) => reloader.reload(next).finally(collectAfterReload), {
    onUnreadable: (error) =>
      log.error(
        { err: error, file },
        'policy file cannot be read (deleted, or no longer readable); keeping the last good policy',
      ),
  });
  log.info({ jobs: scheduler.upcoming() }, 'scheduler started');
  return async () => {
    stopWatching();
    // Redis coming back while the process stops must not start a catch-up behind the stop
    runtime.redis.off('error', onError);
    runtime.redis.off('ready', onReady);
    // an overdue notice being sent gets the grace policy notices get; closing the notifier ends it
    await Promise.all([
      scheduler.stop(),
      within(overdue.stop(), NOTICE_GRACE_MS),
      reloader.settle(NOTICE_GRACE_MS),
    ]);
    await notifier.close();
  };
}

/**
 * A service does not start on a file with problems (printed) when no policy in force could run
 * meanwhile (`why`, from `policyInForceStored`): exit 2.
 */
export function refuseToStart(file: string, why: string): void {
  process.stderr.write(`nightshift: ${file} is invalid and ${why}\n`);
  process.exitCode = 2;
}

function notStartingMessage(file: string): string {
  return `${file} is invalid and no policy signed with this process's NIGHTSHIFT_POLICY_KEY is in force in Redis to run until it is fixed (a first start needs a valid file)`;
}

/**
 * Why a role does not start on `file`: a file with problems (printed already) and no policy in
 * force in Redis to run meanwhile is bad usage (exit 2); anything else goes on as it was.
 */
export function notStarting(file: string, error: unknown): unknown {
  if (!(error instanceof PolicyError)) return error;
  return new UsageError(notStartingMessage(file));
}

export function registerSchedulerCommand(program: Command, settings: Settings): void {
  program
    .command('scheduler <policy>')
    .description('run the scheduler role: turn each tick of the policy into one run on the queue')
    .addHelpText(
      'after',
      [
        '',
        'Needs REDIS_URL and NIGHTSHIFT_POLICY_KEY (it signs the policy it stores in Redis; workers run only',
        'what that key signed), no API settings: workers make the API calls. Run as many replicas as you like; each tick',
        'still becomes one run. The policy is reloaded when the file changes (an invalid edit is logged',
        'and the last good policy kept), also on SIGHUP. Serves the console (/), /healthz, /readyz, /metrics and the queue dashboard (/ui)',
        'on NIGHTSHIFT_HTTP_HOST:NIGHTSHIFT_HTTP_PORT (default 127.0.0.1:9464, or the next free port to 9473) like start and worker.',
        '',
        'Examples:',
        '  REDIS_URL=redis://127.0.0.1:6379 NIGHTSHIFT_POLICY_KEY_FILE=/run/secrets/policy-key nightshift scheduler config/policy.yaml',
        '  NIGHTSHIFT_LOG_FORMAT=pretty nightshift scheduler config/examples/simulator.yaml',
      ].join('\n'),
    )
    .action(async (file: string) => {
      // listening before anything starts: a signal that comes early must stop, not kill, the process
      const signalled = untilSignal();
      const keyring = requiredPolicyKeyring(
        settings,
        'the scheduler signs the policy it stores in Redis with it, and workers run only signed policies',
      );
      // a file with problems may still start on the policy in force in Redis (startSchedulerRole)
      if (!(await loadOrReport(file, policyCommandDeps(settings)))) {
        const why = await policyInForceStored(settings, keyring);
        if (why) return refuseToStart(file, why);
        process.exitCode = undefined;
      }
      const ops = opsSettings(settings);
      const log = cliLogger(settings, 'stdout', { role: 'scheduler' });
      const runtime = redisRuntime(settings, log, 'scheduler', { keyring });
      const status = new PolicyStatus(file);
      const server = await startOpsRole(ops, runtime, log, {
        variables: policyVariables(settings),
        sinkCommands: settings.sinks.commands,
        ready: () => ({ policy: status.readiness() }),
      }).catch(async (error: unknown) => {
        await runtime.close();
        throw error;
      });
      const stop = await unlessStopped(
        startSchedulerRole(settings, file, runtime, log, { metrics: server.metrics, status }),
        signalled,
      ).catch(async (error: unknown) => {
        await server.close();
        await runtime.close();
        throw notStarting(file, error);
      });
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
