import type { Redis } from 'ioredis';
import { createRunQueue } from '../../src/queue/run-queue.js';
import { DEFAULT_API_KEY, type SimulatorHandle, startSimulator } from '../../src/sim/index.js';
import { RunHistory } from '../../src/store/history.js';
import { type LocalRedis, startLocalRedis } from '../../src/store/local-server.js';
import { createRedis } from '../../src/store/redis.js';
import { activeFleet } from './active-fleet.js';
import type { ResolvedChaosOptions } from './chaos-drill.js';
import type { Observed } from './chaos-drill-observed.js';
import { ChaosProcesses } from './chaos-drill-processes.js';
import { HARNESS_POLICY_KEY } from './policy-key.js';

/**
 * What the chaos drill stands on: one append-only Redis server, the simulator with faults and
 * every workspace Active, the drill's own Redis client, run history and run queue, and the
 * nightshift processes. `close()` stops all of it, whatever state the drill left it in.
 */

export interface ChaosStage {
  readonly server: LocalRedis;
  readonly sim: SimulatorHandle;
  readonly redis: Redis;
  readonly history: RunHistory;
  readonly queue: ReturnType<typeof createRunQueue>;
  readonly processes: ChaosProcesses;
  /** Workspaces in the fleet. */
  readonly total: number;
  close(): Promise<void>;
}

/** Where the stage is and where its processes log. */
export interface StageSetup {
  prefix: string;
  logDir: string;
  policyFile: string;
  observed: Observed;
  progress: (line: string) => void;
}

/** The variables of every nightshift process of the drill. */
function chaosEnv(
  options: ResolvedChaosOptions,
  { redisUrl, prefix, apiUrl }: { redisUrl: string; prefix: string; apiUrl: string },
): Record<string, string> {
  return {
    REDIS_URL: redisUrl,
    NIGHTSHIFT_REDIS_PREFIX: prefix,
    NIGHTSHIFT_API_URL: apiUrl,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_POLICY_KEY: HARNESS_POLICY_KEY,
    NIGHTSHIFT_API_RATE_LIMIT: '',
    NIGHTSHIFT_API_TIMEOUT_MS: String(options.apiTimeoutMs),
    NIGHTSHIFT_LOCK_MS: String(options.lockMs),
    NIGHTSHIFT_MAX_STALLS: String(options.maxStalls),
    NIGHTSHIFT_POLL_INTERVAL_MS: String(options.pollIntervalMs),
    NIGHTSHIFT_RUN_PART_SIZE: String(options.partSize),
    NIGHTSHIFT_SHUTDOWN_GRACE_MS: '3000',
    NIGHTSHIFT_HISTORY_PER_JOB: '10000',
    NIGHTSHIFT_HTTP_PORT: '0',
    NIGHTSHIFT_LOG_FORMAT: 'json',
    NIGHTSHIFT_LOG_LEVEL: 'info',
    NO_COLOR: '1',
  };
}

/** Starts Redis and the simulator and connects to them; what started is stopped again if a later step fails. */
export async function openChaosStage(options: ResolvedChaosOptions, setup: StageSetup): Promise<ChaosStage> {
  const { prefix, logDir, policyFile, observed, progress } = setup;
  let server: LocalRedis | undefined;
  let sim: SimulatorHandle | undefined;
  let redis: Redis | undefined;
  let queue: ReturnType<typeof createRunQueue> | undefined;
  let processes: ChaosProcesses | undefined;
  const close = async () => {
    await processes?.killAll();
    await queue?.close();
    redis?.disconnect();
    await sim?.close();
    await server?.stop();
  };
  try {
    server = await startLocalRedis({ appendOnly: true });
    const fleet = activeFleet(
      { workgroups: options.workgroups, workspacesPerWorkgroup: options.workspacesPerWorkgroup },
      options.seed,
    );
    sim = await startSimulator({
      port: 0,
      state: fleet,
      transitionMs: options.transitionMs,
      faults: { seed: options.seed, ...options.faults },
      requestLogLimit: 5_000_000,
    });
    redis = createRedis({ url: server.url, role: 'drill' });
    const history = new RunHistory(redis, { prefix, retention: { maxRunsPerJob: 10_000 } });
    const runQueue = createRunQueue({ connection: redis, prefix });
    // the Redis restart is on purpose: the client reconnects on its own
    runQueue.on('error', () => {});
    queue = runQueue;
    const total = fleet.workspaces.length;
    progress(
      `fleet ${options.workgroups}×${options.workspacesPerWorkgroup} (${total} workspaces), Redis ${server.url} (appendonly), simulator ${sim.url}, logs in ${logDir}`,
    );
    const env = chaosEnv(options, { redisUrl: server.url, prefix, apiUrl: sim.url });
    processes = new ChaosProcesses({ env, logDir, policyFile, observed, progress });
    return { server, sim, redis, history, queue: runQueue, processes, total, close };
  } catch (error) {
    await close();
    throw error;
  }
}
