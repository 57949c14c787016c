/**
 * Window reconciliation: one window over N workspaces (default 100 workgroups × 100 = 10,000)
 * reconciled every minute, on a private redis-server and the simulator (in a child process, so
 * its CPU is not counted). Prints, per reconciliation, the wall time, the CPU time of the
 * reconciling process, the API calls by operation and the Redis write commands:
 *
 * - the off-hours edge: every workspace Active, the first reconciliation of the off period pauses
 *   all of them (and records each pause in the ownership ledger);
 * - quiet off hours: every workspace Stopped and owned, nothing drifted (goal: one listing, no
 *   writes), `--repeat` times;
 * - quiet uptime: every workspace Active, none owned, nothing drifted, `--repeat` times.
 *
 * Exits 1 when the edge did not pause every workspace, or a quiet reconciliation made an API call
 * besides the listing or wrote to Redis.
 *   npx tsx bench/window-reconcile.ts [--workgroups 100] [--per-workgroup 100] [--repeat 10]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { actionRegistry, actions } from '../jobs/index.js';
import { ApiClient } from '../src/api/index.js';
import { executeRun, MemoryCheckpointStore, nodeActionIo, type RunSummary } from '../src/engine/index.js';
import { createLogger, type Logger } from '../src/log/logger.js';
import { type PolicyJob, parsePolicy } from '../src/policy/index.js';
import { seedState, startSimulator } from '../src/sim/index.js';
import { workspaceStatusFields } from '../src/sim/status.js';
import { fleetStateStores, type RedisFleetState } from '../src/store/fleet-state.js';
import { startLocalRedis } from '../src/store/local-server.js';
import { createRedis } from '../src/store/redis.js';

const API_KEY = 'bench-key';

const { values } = parseArgs({
  options: {
    serve: { type: 'boolean', default: false },
    workgroups: { type: 'string', default: '100' },
    'per-workgroup': { type: 'string', default: '100' },
    repeat: { type: 'string', default: '10' },
  },
});

type SimRequest = { op: 'status'; status: 'Active' | 'Stopped' };

/** The simulator's process: a fleet whose statuses the benchmark sets between phases. */
async function serve(): Promise<void> {
  const fleet = {
    workgroups: Number(values.workgroups),
    workspacesPerWorkgroup: Number(values['per-workgroup']),
  };
  const sim = await startSimulator({
    apiKey: API_KEY,
    state: seedState({ seed: 11, fleet }),
    transitionMs: 1,
  });
  process.on('message', (request: SimRequest) => {
    for (const ws of sim.state.workspaces) Object.assign(ws, workspaceStatusFields(request.status));
    sim.state.transitions.splice(0);
    process.send?.({ workspaces: sim.state.workspaces.length });
  });
  process.once('SIGTERM', () => void sim.close().then(() => process.exit(0)));
  process.send?.({ url: sim.url });
}

async function ask<T>(child: ChildProcess, request?: SimRequest): Promise<T> {
  const reply = once(child, 'message') as Promise<[T]>;
  if (request) child.send(request);
  return (await reply)[0];
}

/** An hour of uptime three hours from now (UTC): now is off hours whenever the benchmark runs. */
function policyText(): string {
  const hour = (new Date().getUTCHours() + 3) % 24;
  const hh = String(hour).padStart(2, '0');
  const end = hour === 23 ? '24' : String(hour + 1).padStart(2, '0');
  return `version: 1
windows:
  office:
    target: { workgroups: ["*"] }
    uptime: "Mon-Sun ${hh}:00-${end}:00"
    timezone: UTC
    every: 1m
    concurrency: 64
    timeout: 30m
`;
}

/** Write commands Redis has served so far, from INFO commandstats. */
async function redisWrites(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  const writes = [
    'hset',
    'hdel',
    'set',
    'del',
    'zadd',
    'zrem',
    'lpush',
    'ltrim',
    'hincrbyfloat',
    'zremrangebyscore',
    'pexpire',
  ];
  let total = 0;
  for (const line of stats.split('\n')) {
    const match = /^cmdstat_([a-z]+):calls=(\d+)/.exec(line.trim());
    if (match && writes.includes(match[1] as string)) total += Number(match[2]);
  }
  return total;
}

interface Measured {
  wallMs: number;
  cpuMs: number;
  calls: Map<string, number>;
  redisWrites: number;
  summary: RunSummary;
}

/** What one reconciliation needs and counts: `calls` holds the API calls of the last one, by operation. */
interface Reconciler {
  api: ApiClient;
  redis: Redis;
  state: RedisFleetState;
  calls: Map<string, number>;
  log: Logger;
  runs: number;
}

async function reconcile(rig: Reconciler, job: PolicyJob): Promise<Measured> {
  rig.calls.clear();
  const writesBefore = await redisWrites(rig.redis);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const summary = await executeRun(
    {
      api: rig.api,
      io: nodeActionIo({ environment: process.env }),
      actions,
      checkpoints: new MemoryCheckpointStore(),
      log: rig.log,
      signal: new AbortController().signal,
      pollIntervalMs: 1_000,
      state: rig.state,
    },
    { runId: `office@bench-${rig.runs++}`, job, trigger: 'schedule', dryRun: false },
  );
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    wallMs,
    cpuMs: (used.user + used.system) / 1000,
    calls: new Map(rig.calls),
    redisWrites: (await redisWrites(rig.redis)) - writesBefore,
    summary,
  };
}

async function reconcileRepeatedly(rig: Reconciler, job: PolicyJob, times: number): Promise<Measured[]> {
  const measured: Measured[] = [];
  for (let i = 0; i < times; i++) measured.push(await reconcile(rig, job));
  return measured;
}

function describe(label: string, measured: Measured[]): void {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const wall = measured.map((m) => m.wallMs);
  const cpuUsed = measured.map((m) => m.cpuMs);
  const ops = [...(measured[0]?.calls ?? new Map()).entries()].map(([op, n]) => `${op} ${n}`).join(', ');
  const writes = measured.map((m) => m.redisWrites);
  const summary = measured[0]?.summary;
  process.stdout.write(
    `${label.padEnd(22)} runs ${String(measured.length).padStart(2)}  wall median ${median(wall).toFixed(0).padStart(6)} ms (max ${Math.max(...wall).toFixed(0)})  CPU median ${median(cpuUsed).toFixed(0).padStart(5)} ms (max ${Math.max(...cpuUsed).toFixed(0)})  API calls per run: ${ops}  Redis writes per run: ${Math.max(...writes)}  targets recorded: ${summary?.counts.total} (${summary?.outcome})\n`,
  );
}

/** Where quiet reconciliations did more than list the fleet, wrote to Redis, or failed. */
function unquiet(label: string, measured: Measured[]): string[] {
  const problems: string[] = [];
  for (const [i, m] of measured.entries()) {
    const made = [...m.calls].filter(([op]) => op !== 'listWorkgroups').map(([op, n]) => `${op} ${n}`);
    if (made.length > 0 || (m.calls.get('listWorkgroups') ?? 0) !== 1)
      problems.push(
        `${label} ${i + 1}: API calls ${[...m.calls].map(([op, n]) => `${op} ${n}`).join(', ')}, expected the listing alone`,
      );
    if (m.redisWrites > 0) problems.push(`${label} ${i + 1}: ${m.redisWrites} Redis writes, expected none`);
    if (m.summary.outcome !== 'succeeded')
      problems.push(`${label} ${i + 1}: ${m.summary.outcome} ${m.summary.reason ?? ''}`);
  }
  return problems;
}

/** The same window with uptime all day long: now is always in uptime. */
function allDayJob(): PolicyJob {
  return parsePolicy(policyText().replace(/uptime: ".*"/, 'uptime: "Mon-Sun 00:00-24:00"'), 'bench.yaml', {
    registry: actionRegistry,
    env: {},
  }).jobs[0] as PolicyJob;
}

/** The simulator's process, with the fleet of the command line; answers with its URL once listening. */
async function forkSimulator(): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(
    fileURLToPath(import.meta.url),
    ['--serve', '--workgroups', values.workgroups, '--per-workgroup', values['per-workgroup']],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const { url } = await ask<{ url: string }>(child);
  return { child, url };
}

async function main(): Promise<void> {
  const redisServer = await startLocalRedis({ appendOnly: false });
  const { child, url } = await forkSimulator();
  const redis = createRedis({ url: redisServer.url, role: 'bench' });
  const calls = new Map<string, number>();
  const api = new ApiClient({
    baseUrl: url,
    apiKey: API_KEY,
    timeoutMs: 60_000,
    onCall: (call) => calls.set(call.operation, (calls.get(call.operation) ?? 0) + 1),
  });
  const log = createLogger({ level: 'silent' });
  const rig: Reconciler = { api, redis, state: fleetStateStores(redis, 'bench-window'), calls, log, runs: 0 };
  const policy = parsePolicy(policyText(), 'bench.yaml', { registry: actionRegistry, env: {} });
  const job = policy.jobs[0] as PolicyJob;

  const problems: string[] = [];
  const repeat = Number(values.repeat);
  const { workspaces } = await ask<{ workspaces: number }>(child, { op: 'status', status: 'Active' });
  process.stdout.write(
    `window over ${workspaces} workspaces, reconciled every minute; node ${process.version}, ${cpus().length} cores, load ${loadavg()[0]?.toFixed(2)}\n`,
  );
  const edge = await reconcile(rig, job);
  describe('off-hours edge', [edge]);
  const paused = edge.calls.get('pauseWorkspace') ?? 0;
  if (edge.summary.outcome !== 'succeeded' || paused !== workspaces)
    problems.push(`the edge: ${edge.summary.outcome}, ${paused} pause calls for ${workspaces} workspaces`);
  await ask(child, { op: 'status', status: 'Stopped' });
  const quietOff = await reconcileRepeatedly(rig, job, repeat);
  describe('quiet, off hours', quietOff);
  problems.push(...unquiet('quiet, off hours', quietOff));

  // in uptime with nothing owned: the window wants nothing of a running workspace
  await redis.del('{bench-window}:owned');
  await ask(child, { op: 'status', status: 'Active' });
  const uptime = allDayJob();
  // its first reconciliation records the new period (one write); the quiet ones follow
  describe('uptime, first', [await reconcile(rig, uptime)]);
  const quietUp = await reconcileRepeatedly(rig, uptime, repeat);
  describe('quiet, in uptime', quietUp);
  problems.push(...unquiet('quiet, in uptime', quietUp));
  for (const problem of problems) process.stdout.write(`  CHECK FAILED: ${problem}\n`);
  process.exitCode = problems.length > 0 ? 1 : 0;

  await api.close();
  redis.disconnect();
  child.kill('SIGTERM');
  await once(child, 'exit');
  await redisServer.stop();
}

if (values.serve) await serve();
else await main();
