import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_API_KEY, type SimulatorHandle, startSimulator } from '../../src/sim/index.js';
import { RunHistory } from '../../src/store/history.js';
import { redisKeys } from '../../src/store/keys.js';
import { RedisOwnershipLedger } from '../../src/store/ledger.js';
import { type LocalRedis, startLocalRedis } from '../../src/store/local-server.js';
import { createRedis, type RedisConnection } from '../../src/store/redis.js';
import { activeFleet } from './active-fleet.js';
import type { ResolvedEdgeOptions } from './edge-drill.js';
import { RunLogs } from './edge-drill-logs.js';
import { eventually } from './eventually.js';
import { type NightshiftProcess, startNightshift } from './nightshift-process.js';
import { HARNESS_POLICY_KEY } from './policy-key.js';
import { startRedisSentinels, type TestSentinels } from './redis-topologies.js';

/**
 * What every edge drill scenario stands on: Redis (one append-only server, or a primary, a
 * replica and three Sentinels), the simulator in this process with every workspace Active, the
 * drill's own Redis client and stores, and the nightshift processes it starts, their logs read
 * into one RunLogs. `close()` stops all of it, whatever state the drill left it in.
 */

export interface StageOptions {
  redis: 'server' | 'sentinels';
  /** Variables every nightshift process gets on top of the stage's own and the drill's settings. */
  env: Record<string, string>;
  logDir: string | undefined;
  progress: (line: string) => void;
}

/** Something the drill did or saw, for the report's timeline. */
export interface DrillEvent {
  at: number;
  what: string;
}

export interface Stage {
  readonly logDir: string;
  readonly prefix: string;
  readonly keys: ReturnType<typeof redisKeys>;
  readonly redis: RedisConnection;
  readonly history: RunHistory;
  readonly ledger: RedisOwnershipLedger;
  readonly sim: SimulatorHandle;
  readonly logs: RunLogs;
  /** The variables that point a nightshift process at this stage. */
  readonly env: Record<string, string>;
  readonly processes: NightshiftProcess[];
  readonly events: DrillEvent[];
  /** Keys (`<workgroupId>/<workspaceId>`) of every workspace outside the `prod-*` workgroups: what the drills target. */
  targetKeys(): Set<string>;
  /** Each workspace's status in the simulator now, by key. */
  statuses(): Map<string, string>;
  /** Whether a workspace is pausing or resuming in the simulator now. */
  moving(): boolean;
  /** Waits up to `timeoutMs` for no workspace to be pausing or resuming; answers whether none is. */
  transitionsOver(timeoutMs: number): Promise<boolean>;
  /** Records an event and tells the progress callback. */
  note(what: string, at?: number): void;
  /** Starts `nightshift worker` in slot `slot` and waits for its `worker started`. */
  startWorker(slot: number): Promise<NightshiftProcess>;
  /** Starts `nightshift scheduler <policyFile>` and waits for its `scheduler started`. */
  startScheduler(policyFile: string): Promise<NightshiftProcess>;
  /** Stops Redis with SIGTERM, data kept (one server only). */
  haltRedis(): Promise<void>;
  /** Starts it again on the same port and data. */
  restartRedis(): Promise<void>;
  /** SIGKILLs the primary the Sentinels name (Sentinels only). */
  killPrimary(): Promise<void>;
  /** Stops the nightshift processes still running: SIGTERM to each group, SIGKILL past 20 s. */
  stopProcesses(): Promise<void>;
  close(): Promise<void>;
}

/** `<workgroupId>/<workspaceId>`: how the drills name a workspace. */
const workspaceKey = (ws: { workgroup_id: string; workspace_id: string }) =>
  `${ws.workgroup_id}/${ws.workspace_id}`;

/** Every workspace outside the `prod-*` workgroups, by key. */
function targetKeysIn(sim: SimulatorHandle): Set<string> {
  const prod = new Set(
    sim.state.workgroups.filter((wg) => wg.name.startsWith('prod-')).map((wg) => wg.workgroup_id),
  );
  return new Set(sim.state.workspaces.filter((ws) => !prod.has(ws.workgroup_id)).map(workspaceKey));
}

function statusesIn(sim: SimulatorHandle): Map<string, string> {
  return new Map(sim.state.workspaces.map((ws) => [workspaceKey(ws), ws.status]));
}

function movingIn(sim: SimulatorHandle): boolean {
  return sim.state.workspaces.some((ws) => ws.status === 'Stopping' || ws.status === 'Resuming');
}

/** SIGTERM to each process still running, SIGKILL to one that has not exited 20 s later. */
async function stopGently(processes: readonly NightshiftProcess[]): Promise<void> {
  await Promise.all(
    processes.map(async (p) => {
      if (p.exitedAt() !== undefined) return;
      const timer = setTimeout(() => void p.stop('SIGKILL'), 20_000);
      await p.stop('SIGTERM');
      clearTimeout(timer);
    }),
  );
}

function startStageSimulator(drill: ResolvedEdgeOptions): Promise<SimulatorHandle> {
  return startSimulator({
    port: 0,
    state: activeFleet(
      { workgroups: drill.workgroups, workspacesPerWorkgroup: drill.workspacesPerWorkgroup },
      1,
    ),
    transitionMs: drill.transitionMs,
    faults: { latencyMs: drill.latencyMs },
    requestLogLimit: 5_000_000,
  });
}

/** Where a nightshift process finds the stage's Redis and simulator. */
interface StageEndpoints {
  /** The variables that name the Redis server or the Sentinels. */
  redis: Record<string, string> | undefined;
  prefix: string;
  apiUrl: string;
}

/** The stage's variables, then the drill's settings, then the scenario's own (`extra`) over them. */
function stageEnv(
  drill: ResolvedEdgeOptions,
  endpoints: StageEndpoints,
  extra: Record<string, string>,
): Record<string, string> {
  return {
    ...endpoints.redis,
    NIGHTSHIFT_REDIS_PREFIX: endpoints.prefix,
    NIGHTSHIFT_API_URL: endpoints.apiUrl,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_POLICY_KEY: HARNESS_POLICY_KEY,
    NIGHTSHIFT_API_RATE_LIMIT: '',
    NIGHTSHIFT_HTTP_PORT: '0',
    NIGHTSHIFT_LOG_FORMAT: 'json',
    NIGHTSHIFT_LOG_LEVEL: 'info',
    NO_COLOR: '1',
    ...(drill.lockMs === undefined ? {} : { NIGHTSHIFT_LOCK_MS: String(drill.lockMs) }),
    ...(drill.workerConcurrency === undefined
      ? {}
      : { NIGHTSHIFT_WORKER_CONCURRENCY: String(drill.workerConcurrency) }),
    ...extra,
  };
}

/** What starting a nightshift process on the stage needs. */
interface Launch {
  env: Record<string, string>;
  logDir: string;
  logs: RunLogs;
  processes: NightshiftProcess[];
  note: (what: string) => void;
}

/**
 * Starts nightshift processes named `<slot>#<generation>` (a slot's restarts count up) and waits
 * for each one's ready line; a process that exits on its own afterwards is noted.
 */
function launcher({ env, logDir, logs, processes, note }: Launch) {
  const generations = new Map<string, number>();
  return async (args: string[], slot: string, readyLine: string): Promise<NightshiftProcess> => {
    const generation = generations.get(slot) ?? 0;
    generations.set(slot, generation + 1);
    const name = `${slot}#${generation}`;
    const proc = startNightshift(args, { name, env, logDir, onLine: logs.reader(name) });
    processes.push(proc);
    void proc.exited.then((code) => {
      logs.processEnded(name, proc.exitedAt() ?? Date.now());
      if (!proc.stoppedWith()) note(`!! ${name} exited on its own (${code})`);
    });
    await eventually(
      `${name}: ${readyLine}`,
      () => logs.ready.has(name) || proc.exitedAt() !== undefined,
      30_000,
      50,
    );
    if (!logs.ready.has(name)) throw new Error(`${name} exited during its start; see ${logDir}`);
    return proc;
  };
}

/** What a stage runs on: one Redis server or the Sentinels, the simulator and the drill's client. */
interface Services {
  server: LocalRedis | undefined;
  sentinels: TestSentinels | undefined;
  sim: SimulatorHandle;
  redis: RedisConnection;
}

/** The rest of a stage, made before its services started. */
interface StageParts extends Pick<Stage, 'logDir' | 'prefix' | 'logs' | 'env' | 'processes' | 'events'> {
  note: Stage['note'];
  close: Stage['close'];
}

function assembleStage({ server, sentinels, sim, redis }: Services, parts: StageParts): Stage {
  const { logDir, prefix, logs, env, processes, events, note, close } = parts;
  const start = launcher({ env, logDir, logs, processes, note });
  const stage: Stage = {
    logDir,
    prefix,
    keys: redisKeys(prefix),
    redis,
    history: new RunHistory(redis, { prefix, retention: { maxRunsPerJob: 10_000 } }),
    ledger: new RedisOwnershipLedger(redis, { prefix }),
    sim,
    logs,
    env,
    processes,
    events,
    targetKeys: () => targetKeysIn(sim),
    statuses: () => statusesIn(sim),
    moving: () => movingIn(sim),
    transitionsOver: (timeoutMs) =>
      eventually('transitions over', () => !stage.moving(), timeoutMs, 200).catch(() => false),
    note,
    startWorker: (slot) => start(['worker'], `worker-${slot}`, 'worker started'),
    startScheduler: (policyFile) => start(['scheduler', policyFile], 'scheduler-1', 'scheduler started'),
    haltRedis: async () => {
      if (!server) throw new Error('haltRedis: the stage runs Sentinels');
      await server.halt();
    },
    restartRedis: async () => {
      if (!server) throw new Error('restartRedis: the stage runs Sentinels');
      await server.restart();
    },
    killPrimary: async () => {
      if (!sentinels) throw new Error('killPrimary: the stage runs one Redis server');
      await sentinels.killPrimary();
    },
    stopProcesses: () => stopGently(processes),
    close,
  };
  return stage;
}

/**
 * The fleet, the simulator's latency and transition and the processes' settings come from the
 * drill's options (`lockMs`, `workerConcurrency`: left to the processes' defaults when undefined).
 */
export async function openStage(drill: ResolvedEdgeOptions, options: StageOptions): Promise<Stage> {
  const logDir = options.logDir ?? mkdtempSync(join(tmpdir(), 'nightshift-edge-'));
  mkdirSync(logDir, { recursive: true });
  const prefix = `edge-${Date.now().toString(36)}`;
  const logs = new RunLogs();
  const processes: NightshiftProcess[] = [];
  const events: DrillEvent[] = [];
  let server: LocalRedis | undefined;
  let sentinels: TestSentinels | undefined;
  let sim: SimulatorHandle | undefined;
  let redis: RedisConnection | undefined;

  const note = (what: string, at = Date.now()) => {
    events.push({ at, what });
    options.progress(what);
  };
  // a drill interrupted (Ctrl-C, a test runner's SIGTERM) still stops everything it started
  const interrupted = (signal: NodeJS.Signals) => {
    void close().finally(() => process.kill(process.pid, signal));
  };
  const close = async () => {
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    redis?.disconnect();
    await sim?.close();
    await server?.stop();
    await sentinels?.stop();
  };

  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    if (options.redis === 'server') server = await startLocalRedis({ appendOnly: true });
    else sentinels = await startRedisSentinels();
    sim = await startStageSimulator(drill);
    redis = server ? createRedis({ url: server.url, role: 'drill' }) : sentinels?.connect('drill');
    if (!redis) throw new Error('no Redis');
    const env = stageEnv(
      drill,
      { redis: server ? { REDIS_URL: server.url } : sentinels?.environment, prefix, apiUrl: sim.url },
      options.env,
    );
    const stage = assembleStage(
      { server, sentinels, sim, redis },
      { logDir, prefix, logs, env, processes, events, note, close },
    );
    options.progress(
      `fleet ${drill.workgroups}×${drill.workspacesPerWorkgroup}, ${drill.latencyMs} ms a call, ${drill.transitionMs} ms a transition; Redis ${server ? `${server.url} (appendonly)` : 'primary + replica + 3 Sentinels'}; logs in ${logDir}`,
    );
    return stage;
  } catch (error) {
    await close();
    throw error;
  }
}
