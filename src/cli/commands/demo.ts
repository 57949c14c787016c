import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type Command, InvalidArgumentError, Option } from 'commander';
import pino from 'pino';
import {
  configuredRedis,
  DEFAULT_REDIS_PREFIX,
  type Environment,
  type Settings,
  withVariables,
} from '../../config/index.js';
import type { RunSummary } from '../../engine/index.js';
import { createLogger, type Logger } from '../../log/index.js';
import { parseDuration, WINDOW_ACTION } from '../../policy/index.js';
import {
  DEFAULT_API_KEY,
  DEFAULT_BEARER_TOKEN,
  type Fleet,
  type SimulatorHandle,
  startSimulator,
} from '../../sim/index.js';
import {
  describeRedis,
  type LocalRedis,
  RedisServerMissingError,
  startLocalRedis,
} from '../../store/index.js';
import { asUsage, EXIT, UsageError } from '../exit.js';
import { counts as drifting, driftRows, savingsSince } from '../fleet-report.js';
import { type OpsSettings, opsSettings, startOpsRole } from '../ops.js';
import { loadPolicy, policyCommandDeps, policyVariables } from '../policy-io.js';
import {
  actionApiClient,
  apiSettings,
  exitOnceIdle,
  processPolicyKeyring,
  type RedisRuntime,
  redisRuntime,
  untilSignal,
} from '../runtime.js';
import { alignColumns } from '../table.js';
import { packageRoot } from '../version.js';
import { startSchedulerRole } from './scheduler.js';
import { startWorkerRole } from './worker.js';

interface DemoFlags {
  duration?: number;
  fleet: Fleet;
}

const DEMO_POLICY = fileURLToPath(new URL('config/demo.yaml', packageRoot));
/** Long enough that a resume or a restore is seen under way, short enough for a one-minute day. */
const TRANSITION_MS = 3000;

function parseDemoDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < 5_000)
    throw new InvalidArgumentError('expected a duration of 5s or more, e.g. 60s or 5m');
  return ms;
}

function parseFleet(text: string): Fleet {
  const match = /^(\d+)x(\d+)$/.exec(text);
  if (!match) throw new InvalidArgumentError('expected WORKGROUPSxWORKSPACES, e.g. 20x5');
  return { workgroups: Number(match[1]), workspacesPerWorkgroup: Number(match[2]) };
}

/**
 * The demo window's uptime: up on odd minutes, down on even ones, so a working day passes every two
 * minutes (uptime is written in whole minutes; a real policy says "Mon-Fri 07:30-19:30").
 */
export function oddMinutesUptime(): string {
  const ranges: string[] = [];
  for (let minute = 1; minute < 1440; minute += 2) {
    const at = (m: number) =>
      `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
    ranges.push(`Mon-Sun ${at(minute)}-${at(minute + 1)}`);
  }
  return ranges.join(', ');
}

function clock(at: Date = new Date()): string {
  return at.toISOString().slice(11, 19);
}

/** One line per finished run, as the demo shows them. */
function describeRun(run: RunSummary): string {
  const { counts } = run;
  const parts = [`${counts.total} target${counts.total === 1 ? '' : 's'}`];
  if (counts.succeeded) parts.push(`${counts.succeeded} done`);
  if (counts.skipped) parts.push(`${counts.skipped} skipped`);
  if (counts.failed) parts.push(`${counts.failed} failed`);
  if (run.findings.length) parts.push(`${run.findings.length} findings`);
  const restore = run.evidence?.timeToRestoreMs;
  if (typeof restore === 'number') parts.push(`restored in ${(restore / 1000).toFixed(1)} s`);
  if (run.durationMs !== undefined) parts.push(`took ${(run.durationMs / 1000).toFixed(1)} s`);
  return `[${clock()}] ${run.job.padEnd(17)} ${run.outcome.padEnd(9)} ${parts.join(', ')}${run.reason ? ` (${run.reason})` : ''}`;
}

function fleetLine(sim: SimulatorHandle): string {
  const byStatus = new Map<string, number>();
  for (const ws of sim.state.workspaces) byStatus.set(ws.status, (byStatus.get(ws.status) ?? 0) + 1);
  const counts = [...byStatus.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${n} ${s}`);
  return `[${clock()}] fleet: ${counts.join(', ')}`;
}

/** The demo's Redis: the one the settings name, else a private redis-server; how it is shown; what the roles' settings add. */
interface DemoRedis {
  shown: string;
  variables: Environment;
  server?: LocalRedis;
}

async function startRedis(settings: Settings): Promise<DemoRedis> {
  const configured = asUsage(() => configuredRedis(settings));
  if (configured) return { shown: `${describeRedis(configured)} (configured)`, variables: {} };
  try {
    const server = await startLocalRedis({ appendOnly: false });
    return { shown: `${server.url} (private redis-server)`, variables: { REDIS_URL: server.url }, server };
  } catch (error) {
    if (error instanceof RedisServerMissingError)
      throw new UsageError(`the demo needs Redis: ${error.message}`);
    throw error;
  }
}

/**
 * Everything the demo needs, started in this process with nothing configured: a private
 * redis-server, the simulator with a seeded fleet, and the scheduler and worker roles on
 * config/demo.yaml, exactly as `nightshift start` runs them. Their JSON logs go to a file so the
 * terminal shows the story: one line per finished run and the fleet's statuses.
 */
async function runDemo(settings: Settings, flags: DemoFlags): Promise<void> {
  // settings first: a bad one is reported before anything is started that would need stopping
  const ops = opsSettings({ ...settings, http: { ...settings.http, port: settings.http.port ?? 0 } });
  const redis = await startRedis(settings);
  let sim: SimulatorHandle | undefined;
  try {
    sim = await startSimulator({ port: 0, seed: 1, fleet: flags.fleet, transitionMs: TRANSITION_MS });
    await showDemo(flags, { settings, ops }, redis, sim);
  } finally {
    await sim?.close();
    await redis.server?.stop();
  }
}

/** The ops server, the worker and the scheduler, as `nightshift start` runs them; none left running if one fails. */
async function startRoles(
  settings: Settings,
  runtime: RedisRuntime,
  log: Logger,
  opsSettings: OpsSettings | undefined,
) {
  const ops = await startOpsRole(opsSettings, runtime, log, {
    variables: policyVariables(settings),
    sinkCommands: settings.sinks.commands,
  });
  const stopWorker = startWorkerRole(settings, runtime, log.child({ role: 'worker' }), {
    metrics: ops.metrics,
  });
  try {
    const stopScheduler = await startSchedulerRole(
      settings,
      DEMO_POLICY,
      runtime,
      log.child({ role: 'scheduler' }),
      { metrics: ops.metrics },
    );
    return { ops, stopWorker, stopScheduler };
  } catch (error) {
    await stopWorker();
    await ops.close();
    throw error;
  }
}

/**
 * The roles' own settings: this Redis and simulator, and the variables config/demo.yaml reads. The
 * restore drill restores the newest backup of the seeded `drill` workspace.
 */
function demoRoleSettings(settings: Settings, redis: DemoRedis, sim: SimulatorHandle): Settings {
  const drill = sim.state.workspaces.find((ws) => ws.name === 'drill');
  const backup = sim.state.backups
    .filter((b) => b.workspace_id === drill?.workspace_id)
    .sort((a, b) => b.created_at.localeCompare(a.created_at))[0];
  return asUsage(() =>
    withVariables(settings, {
      ...redis.variables,
      // the installation's own keys stay out of reach unless a prefix was chosen for the demo
      NIGHTSHIFT_REDIS_PREFIX:
        settings.redis.prefix === DEFAULT_REDIS_PREFIX ? `demo-${process.pid}` : settings.redis.prefix,
      NIGHTSHIFT_API_URL: sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_API_KEY_FILE: '',
      NIGHTSHIFT_BEARER_TOKEN: DEFAULT_BEARER_TOKEN,
      NIGHTSHIFT_POLL_INTERVAL_MS: '500',
      DEMO_BACKUP_ID: backup?.backup_id ?? 'no-backup',
      DEMO_UPTIME: oddMinutesUptime(),
    }),
  );
}

type Out = (line: string) => void;

/** What the demo runs on and where to look, printed before the story starts. */
function printSetup(
  out: Out,
  flags: DemoFlags,
  where: { console?: string; dashboard?: string; redis: string; logFile: string },
  sim: SimulatorHandle,
): void {
  // the console first: what a newcomer opens while the story below unfolds
  out(
    where.console
      ? `console: ${where.console} (schedules, runs, fleet, savings and findings, live)`
      : 'console: off (NIGHTSHIFT_HTTP_PORT=off)',
  );
  out('nightshift demo: a working day every two minutes on a simulated fleet; nothing to configure');
  out(
    alignColumns([
      ['  simulator', `${sim.url} (${flags.fleet.workgroups}x${flags.fleet.workspacesPerWorkgroup} fleet)`],
      ['  redis', where.redis],
      ['  policy', DEMO_POLICY],
      ['  queue', where.dashboard ?? 'off (NIGHTSHIFT_HTTP_PORT=off)'],
      ['  logs', where.logFile],
      [
        '  schedule',
        'window office-hours: up on odd minutes, paused on even ones (reconciled every 10 s); restore drill :35, allow-list audit :50',
      ],
      ['  stop', flags.duration ? `after ${Math.round(flags.duration / 1000)} s` : 'Ctrl-C'],
    ]),
  );
  out(fleetLine(sim));
}

/**
 * Prints each run once, as it finishes, and keeps them for the summary. `report` reads the history
 * again; a history that cannot be read now is read on the next call.
 */
function runReporter(runtime: RedisRuntime, out: Out): { report(): Promise<void>; finished: RunSummary[] } {
  const seen = new Set<string>();
  const finished: RunSummary[] = [];
  const report = async () => {
    const runs = await runtime.history.list({ limit: 100 }).catch(() => []);
    for (const run of runs.reverse()) {
      if (seen.has(run.runId)) continue;
      seen.add(run.runId);
      finished.push(run);
      // a window's reconciliations that found nothing to do are not news
      if (run.counts.total > 0 || run.action !== WINDOW_ACTION || run.outcome !== 'succeeded')
        out(describeRun(run));
    }
  };
  return { report, finished };
}

/** Reports runs every half second, and the fleet every ten, until the duration ends or a signal comes. */
async function followUntilStopped(
  flags: DemoFlags,
  out: Out,
  sim: SimulatorHandle,
  report: () => Promise<void>,
): Promise<void> {
  const stopped = flags.duration ? sleep(flags.duration).then(() => 'duration') : untilSignal();
  let done = false;
  void stopped.then(() => {
    done = true;
  });
  let lastFleet = Date.now();
  while (!done) {
    await sleep(500);
    await report();
    if (Date.now() - lastFleet >= 10_000) {
      out(fleetLine(sim));
      lastFleet = Date.now();
    }
  }
}

/** The closing summary: each job's outcomes, the totals, then the fleet report. Returns the exit code. */
function printSummary(
  out: Out,
  finished: readonly RunSummary[],
  logFile: string,
  fleet: readonly string[],
): number {
  const byJob = new Map<string, string[]>();
  for (const run of finished) byJob.set(run.job, [...(byJob.get(run.job) ?? []), run.outcome]);
  out('\nsummary');
  out(
    alignColumns([
      ['  JOB', 'RUNS', 'OUTCOMES'],
      ...[...byJob.entries()].map(([job, outcomes]) => [
        `  ${job}`,
        String(outcomes.length),
        outcomes.join(', '),
      ]),
    ]),
  );
  const findings = finished.reduce((sum, run) => sum + run.findings.length, 0);
  const failed = finished.filter((run) => run.outcome === 'failed' || run.outcome === 'partial');
  out(
    `  ${finished.length} runs, ${failed.length} failed or partial, ${findings} findings; logs in ${logFile}`,
  );
  for (const line of fleet) out(line);
  return failed.length > 0 ? EXIT.failed : EXIT.ok;
}

async function showDemo(
  flags: DemoFlags,
  { settings, ops: opsSettings }: { settings: Settings; ops: OpsSettings | undefined },
  redis: DemoRedis,
  sim: SimulatorHandle,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'nightshift-demo-'));
  const logFile = join(dir, 'nightshift.log');
  const roles = demoRoleSettings(settings, redis, sim);
  const demoStart = new Date();
  const log = createLogger({
    level: settings.log.level ?? 'info',
    destination: pino.destination({ dest: logFile, sync: false }),
  });
  const runtime = redisRuntime(roles, log, 'demo', { keyring: processPolicyKeyring(roles, log) });
  const started = await startRoles(roles, runtime, log, opsSettings).catch(async (error: unknown) => {
    await runtime.close();
    throw error;
  });
  const { ops, stopWorker, stopScheduler } = started;

  const out: Out = (line) => process.stdout.write(`${line}\n`);
  printSetup(
    out,
    flags,
    { console: ops.console, dashboard: ops.dashboard, redis: redis.shown, logFile },
    sim,
  );
  const { report, finished } = runReporter(runtime, out);
  await followUntilStopped(flags, out, sim, report);

  out(`[${clock()}] stopping: no new ticks; letting runs in flight finish`);
  await stopScheduler();
  await stopWorker();
  await report();
  const fleet = await fleetReport(roles, runtime, demoStart).catch((error: unknown) => [
    `  drift and savings not read: ${(error as Error).message}`,
  ]);
  await ops.close();
  await runtime.close();
  exitOnceIdle();
  process.exitCode = printSummary(out, finished, logFile, fleet);
}

/** The end of the demo's summary: what `nightshift drift` and `nightshift savings` would say now. */
async function fleetReport(settings: Settings, runtime: RedisRuntime, since: Date): Promise<string[]> {
  const policy = await loadPolicy(DEMO_POLICY, policyCommandDeps(settings));
  const api = actionApiClient(settings, apiSettings(settings), createLogger({ level: 'silent' }));
  try {
    const now = new Date();
    const rows = await driftRows(policy, api, runtime.state, now);
    const report = await savingsSince(runtime.state.ledger, since, now);
    const cost =
      report.totalEstimatedCost === null
        ? 'not priced'
        : `${report.totalEstimatedCost.toFixed(2)} ${report.currency}`;
    return [
      `  drift: ${rows.filter(drifting).length} of ${rows.length} workspace(s) under windows differ from their desired state (nightshift drift config/demo.yaml)`,
      `  savings: ${report.totalPausedHours.toFixed(2)} hours paused by nightshift across ${report.workspaces.length} workspace(s), estimated cost avoided ${cost} (nightshift savings)`,
    ];
  } finally {
    await api.close();
  }
}

export function registerDemoCommand(program: Command, settings: Settings): void {
  program
    .command('demo')
    .description(
      'watch nightshift work: a private Redis, the simulator and config/demo.yaml, nothing to configure',
    )
    .option(
      '--duration <time>',
      'stop by itself after this long and print a summary, e.g. 60s',
      parseDemoDuration,
    )
    .addOption(
      new Option('--fleet <WxS>', 'simulated workgroups x workspaces')
        .argParser(parseFleet)
        .default({ workgroups: 20, workspacesPerWorkgroup: 5 }, '20x5'),
    )
    .addHelpText(
      'after',
      '\nNeeds redis-server on the PATH (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis),\nor REDIS_URL pointing at a Redis it may use (under a key prefix of its own).\nExit codes: 0 every run succeeded, 1 a run failed or partly failed, 2 bad usage or no Redis.\n\nExamples:\n  npm run demo\n  nightshift demo --duration 60s\n  nightshift demo --fleet 50x10',
    )
    .action(async (flags: DemoFlags) => {
      await runDemo(settings, flags);
    });
}
