import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { eventually } from '../../bench/harness/eventually.js';
import { assertBuilt, killGroup, spawnNightshift } from '../../bench/harness/nightshift-process.js';
import { HARNESS_POLICY_KEY, harnessKeyring } from '../../bench/harness/policy-key.js';
import { actionRegistry, actions } from '../../jobs/index.js';
import { ApiClient } from '../../src/api/index.js';
import { workerStores } from '../../src/cli/worker-wiring.js';
import { nodeActionIo, type RunSummary } from '../../src/engine/index.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { type Policy, parsePolicy } from '../../src/policy/index.js';
import { createRunQueue, enqueueRuns, manualRunId } from '../../src/queue/run-queue.js';
import { RunWorker, type RunWorkerOptions } from '../../src/queue/run-worker.js';
import { Scheduler, type SchedulerOptions } from '../../src/scheduler/scheduler.js';
import {
  DEFAULT_API_KEY,
  type Fleet,
  type SimState,
  type SimulatorHandle,
  type SimulatorOptions,
  seedState,
  startSimulator,
} from '../../src/sim/index.js';
import { RedisCheckpointStore } from '../../src/store/checkpoint.js';
import { fleetStateStores } from '../../src/store/fleet-state.js';
import { RunHistory } from '../../src/store/history.js';
import { LastTicks, RedisWindowStates } from '../../src/store/index.js';
import { redisKeys } from '../../src/store/keys.js';
import { PolicyStore } from '../../src/store/policy-store.js';
import { createRedis, type RedisConnection } from '../../src/store/redis.js';
import { RunStarts } from '../../src/store/run-starts.js';
import { Suspensions } from '../../src/store/suspensions.js';
import { systemClock } from '../../src/time/index.js';
import { running } from './processes.js';
import { startTestRedis, type TestRedis, uniquePrefix } from './redis.js';
import type { RedisConnector } from './redis-topologies.js';

// the drills in bench/ use them too, and bench/ imports nothing from test/
export { assertBuilt, eventually, HARNESS_POLICY_KEY, harnessKeyring };

/** A pino line as a test reads it back. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A real logger (production redaction included) whose lines land in `lines`, parsed. */
export function captureLog(level = 'info'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = createLogger({
    level,
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  return { log, lines };
}

/** The most of `times` (milliseconds, in order) inside any one-second window. */
export function busiestSecond(times: readonly number[]): number {
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) >= 1000) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/** Sleeps until `ms` past the next whole second, so a test starts well clear of a per-second tick. */
export async function untilMsIntoSecond(ms: number): Promise<Date> {
  const now = Date.now();
  const target = Math.ceil((now + 1) / 1000) * 1000 + ms;
  await sleep(target - now);
  return new Date();
}

/**
 * A 6-field cron that fires at the given offsets (in seconds, < 60) from a base instant at
 * least `leadMs` away, and the instants it fires at. Only the first minute's firings matter to
 * a test; the cron fires again the minute after.
 */
export function secondsCron(offsets: readonly number[], leadMs = 300): { cron: string; ticks: Date[] } {
  const base = Math.ceil((Date.now() + leadMs) / 1000) * 1000;
  const ticks = offsets.map((offset) => new Date(base + offset * 1000));
  const seconds = [...new Set(ticks.map((at) => at.getUTCSeconds()))].sort((a, b) => a - b);
  return { cron: `${seconds.join(',')} * * * * *`, ticks };
}

/** A seeded fleet whose workspaces are all Active, so a pause has something to do everywhere. */
export function activeFleet(fleet: Fleet, seed = 7): SimState {
  const state = seedState({ seed, fleet });
  for (const ws of state.workspaces) {
    ws.status = 'Active';
    ws.display_status = 'Running';
    ws.condition_type = 'Ready';
  }
  return state;
}

/** A simulator on a free port over an all-Active fleet; close it with `close()`. */
export function startFleetSim(fleet: Fleet, options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  return startSimulator({ port: 0, transitionMs: 100, state: activeFleet(fleet), ...options });
}

/** The simulator's workspaces whose status is not `status`. */
export function workspacesNot(sim: SimulatorHandle, status: string): string[] {
  return sim.state.workspaces.filter((ws) => ws.status !== status).map((ws) => ws.workspace_id);
}

/** Pause requests the simulator answered, by workspace id. */
export function pauseRequests(sim: SimulatorHandle): Map<string, { status: number | null; at: number }[]> {
  const byWorkspace = new Map<string, { status: number | null; at: number }[]>();
  for (const entry of sim.requests()) {
    if (entry.operation !== 'pauseWorkspace') continue;
    const id = entry.path.split('/').at(-2) as string;
    const list = byWorkspace.get(id) ?? [];
    list.push({ status: entry.status, at: Date.parse(entry.time) });
    byWorkspace.set(id, list);
  }
  return byWorkspace;
}

/** A queue whose connection errors (a test's Redis outage) are expected: BullMQ prints them otherwise. */
function quiet<Q extends ReturnType<typeof createRunQueue>>(queue: Q): Q {
  queue.on('error', () => undefined);
  return queue;
}

/**
 * Everything the engine keeps in Redis, under a key prefix of its own, plus the schedulers and
 * workers a test starts; `close()` stops and closes all of it.
 */
export class Engine {
  readonly prefix: string;
  readonly keys: ReturnType<typeof redisKeys>;
  /** The test's own client: what it reads and writes to check or set up state. */
  readonly redis: RedisConnection;
  readonly history: RunHistory;
  readonly suspensions: Suspensions;
  readonly policies: PolicyStore;
  readonly checkpoints: RedisCheckpointStore;
  readonly queue: ReturnType<typeof createRunQueue>;
  /** The ownership ledger, holds and windows' state, as the test's own client sees them. */
  readonly state: ReturnType<typeof fleetStateStores>;
  readonly runStarts: RunStarts;
  readonly logged: LogLine[];
  readonly log: Logger;
  readonly #connect: RedisConnector;
  readonly #closers: (() => Promise<unknown>)[] = [];

  /** On the Redis at `redis` (a URL), or on the connections `redis` makes (a cluster, Sentinels). */
  constructor(redis: string | RedisConnector, label = 'engine') {
    this.#connect = typeof redis === 'string' ? (role) => createRedis({ url: redis, role }) : redis;
    this.prefix = uniquePrefix(label);
    this.keys = redisKeys(this.prefix);
    this.redis = this.#connect('test');
    this.history = new RunHistory(this.redis, { prefix: this.prefix });
    this.suspensions = new Suspensions(this.redis, { prefix: this.prefix });
    this.policies = new PolicyStore(this.redis, { prefix: this.prefix, keyring: harnessKeyring() });
    this.checkpoints = new RedisCheckpointStore(this.redis, { prefix: this.prefix });
    this.queue = quiet(createRunQueue({ connection: this.redis, prefix: this.prefix }));
    this.state = fleetStateStores(this.redis, this.prefix);
    this.runStarts = new RunStarts(this.redis, { prefix: this.prefix });
    ({ log: this.log, lines: this.logged } = captureLog());
  }

  /** Parses a policy with the real action registry (and no environment). */
  parse(text: string): Policy {
    return parsePolicy(text, 'policy.yaml', { registry: actionRegistry, env: {} });
  }

  /**
   * A scheduler with a Redis client and queue of its own, as a separate replica would have. It
   * hands ticks over on the instant (`leadMs: 0`) unless told otherwise, so a test that stops it
   * knows which ticks it handled; test/integration/engine/lead.test.ts covers handing over early.
   */
  scheduler(options: Partial<SchedulerOptions> = {}): Scheduler {
    const redis = this.#connect('scheduler');
    const queue = quiet(createRunQueue({ connection: redis, prefix: this.prefix }));
    const scheduler = new Scheduler({
      lastTicks: new LastTicks(redis, { prefix: this.prefix }),
      windowStates: new RedisWindowStates(redis, { prefix: this.prefix }),
      enqueue: (runs) => enqueueRuns(queue, runs),
      clock: systemClock,
      policies: new PolicyStore(redis, { prefix: this.prefix, keyring: harnessKeyring() }),
      history: new RunHistory(redis, { prefix: this.prefix }),
      suspensions: new Suspensions(redis, { prefix: this.prefix }),
      log: this.log.child({ role: 'scheduler' }),
      leadMs: 0,
      ...options,
    });
    this.#closers.push(async () => {
      await scheduler.stop();
      await queue.close();
      await redis.quit();
    });
    return scheduler;
  }

  /** A started worker with a Redis client of its own, acting on the simulator at `apiUrl`. */
  worker(apiUrl: string, options: Partial<RunWorkerOptions> = {}): RunWorker {
    const redis = this.#connect('worker');
    const api = new ApiClient({ baseUrl: apiUrl, apiKey: DEFAULT_API_KEY, timeoutMs: 10_000 });
    const log = options.log ?? this.log.child({ role: 'worker' });
    const lockDurationMs = options.lockDurationMs ?? 5_000;
    const stores = workerStores({
      connection: redis,
      prefix: this.prefix,
      lockDurationMs,
      starts: new RunStarts(redis, { prefix: this.prefix }),
      log,
      clock: options.clock,
    });
    const worker = new RunWorker({
      redis,
      stores,
      prefix: this.prefix,
      api,
      io: nodeActionIo({ environment: process.env }),
      actions,
      registry: actionRegistry,
      env: {},
      policies: new PolicyStore(redis, { prefix: this.prefix, keyring: harnessKeyring() }),
      history: new RunHistory(redis, { prefix: this.prefix }),
      checkpoints: new RedisCheckpointStore(redis, { prefix: this.prefix }),
      checkSuspensions: true,
      state: fleetStateStores(redis, this.prefix),
      pollIntervalMs: 100,
      ...options,
      log,
      lockDurationMs,
    });
    worker.start();
    let closed = false;
    const close = worker.close.bind(worker);
    worker.close = async (graceMs: number) => {
      if (closed) return;
      closed = true;
      await close(graceMs);
      await api.close();
      await redis.quit();
    };
    this.#closers.push(() => worker.close(1_000));
    return worker;
  }

  /** Enqueues a manual run of `job` (as `nightshift run` does) and returns its run id. */
  async enqueue(
    text: string,
    job: string,
    { dryRun = false, runId = manualRunId(job) } = {},
  ): Promise<string> {
    const policySha = await this.policies.put(text);
    await enqueueRuns(this.queue, [{ runId, job, policySha, trigger: 'manual', dryRun }]);
    return runId;
  }

  /** The run's summary, once a worker has recorded it. */
  waitForRun(runId: string, timeoutMs = 15_000): Promise<RunSummary> {
    return eventually(`run ${runId} recorded`, () => this.history.get(runId), timeoutMs);
  }

  /** Log lines with this message. */
  lines(msg: string): LogLine[] {
    return this.logged.filter((line) => line.msg === msg);
  }

  async close(): Promise<void> {
    for (const close of this.#closers.splice(0).reverse()) await close();
    await this.queue.close();
    await this.redis.quit();
  }
}

/** A `nightshift` CLI child process, with what it printed kept for a failing test's message. */
export interface CliProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** stdout alone so far (what `--json` prints). */
  stdout(): string;
  /** stderr alone so far. */
  stderr(): string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<number | NodeJS.Signals | null>;
  /** Sends `signal` unless the process has already exited, and waits for it to exit. */
  stop(signal: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

const COMPILE_CACHE = join(tmpdir(), 'nightshift-test-compile-cache');

/**
 * A worker process that gives up a dead worker's runs fast (1.5 s locks, 200 ms polls, 2 s grace):
 * for tests that kill workers and watch another take their runs over.
 */
export function startTakeoverWorker(
  redis: string | Record<string, string>,
  apiUrl: string,
  prefix: string,
  env: Record<string, string> = {},
): CliProcess {
  return startCli(['worker'], {
    // a URL, or the variables that name a cluster or Sentinels
    ...(typeof redis === 'string' ? { REDIS_URL: redis } : redis),
    NIGHTSHIFT_API_URL: apiUrl,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_REDIS_PREFIX: prefix,
    NIGHTSHIFT_LOCK_MS: '1500',
    NIGHTSHIFT_POLL_INTERVAL_MS: '200',
    NIGHTSHIFT_SHUTDOWN_GRACE_MS: '2000',
    NIGHTSHIFT_LOG_LEVEL: 'info',
    ...env,
  });
}

/**
 * Starts `node bin/nightshift.js <args>` with `env` over a copy of this process's environment, in
 * a process group of its own (`spawnNightshift`): stopping it stops the whole group. Its ops
 * server takes a free port unless `env` says otherwise, so CLI processes never clash.
 */
export function startCli(args: readonly string[], env: Record<string, string>): CliProcess {
  const child = spawnNightshift(args, {
    // the suite starts the CLI some hundred times: V8's code cache on disk spares compiling it each time
    NODE_COMPILE_CACHE: COMPILE_CACHE,
    NIGHTSHIFT_API_RATE_LIMIT: '',
    NIGHTSHIFT_HTTP_PORT: '0',
    // the key the test's own stores sign with; a test of a process without one sets it to ''
    NIGHTSHIFT_POLICY_KEY: HARNESS_POLICY_KEY,
    NIGHTSHIFT_POLICY_KEY_FILE: '',
    ...env,
  });
  let text = '';
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    stderr += chunk.toString();
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal);
    });
  });
  running.set(child, true);
  return {
    child,
    output: () => text,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    stop: async (signal) => {
      if (child.exitCode === null && child.signalCode === null) killGroup(child, signal);
      return exited;
    },
  };
}

/** The JSON log lines a CLI process printed so far (NIGHTSHIFT_LOG_FORMAT=json), parsed. */
export function logLines(cli: CliProcess): LogLine[] {
  return cli
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** The first log line with this message the process prints (within 15 s); failing, its output says why. */
export async function logged(cli: CliProcess, msg: string): Promise<LogLine> {
  return eventually(msg, () => logLines(cli).find((line) => line.msg === msg), 15_000).catch(
    (error: Error) => {
      throw new Error(`${error.message}\n--- output:\n${cli.output()}`);
    },
  );
}

/** What a test file's harness gives its tests. */
export interface EngineHarness {
  readonly server: TestRedis;
  readonly sim: SimulatorHandle;
  /** A fresh Engine under its own key prefix, closed after the test. */
  engine(label: string): Engine;
  /** A worker process that takes dead workers' runs over fast (startTakeoverWorker), SIGKILLed after the test. */
  startWorker(engine: Engine, env?: Record<string, string>): CliProcess;
}

export interface EngineHarnessOptions {
  /** The file starts CLI processes, which run the build: it must be fresher than every source (checked before the first test). Default false. */
  built?: boolean;
}

/**
 * One Redis and one simulator per test file, started together before the first test, and
 * Engines and worker processes per test, stopped after it, so a failing test cannot leak into
 * the next.
 */
export function useEngineHarness(
  fleet: Fleet,
  simOptions: SimulatorOptions = {},
  { built = false }: EngineHarnessOptions = {},
): EngineHarness {
  let server: TestRedis | undefined;
  let sim: SimulatorHandle | undefined;
  const engines: Engine[] = [];
  const workers: CliProcess[] = [];
  beforeAll(async () => {
    if (built) assertBuilt();
    [server, sim] = await Promise.all([startTestRedis(), startFleetSim(fleet, simOptions)]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL')));
    for (const engine of engines.splice(0)) await engine.close();
  });
  afterAll(async () => {
    await sim?.close();
    await server?.stop();
  });
  return {
    get server() {
      return server as TestRedis;
    },
    get sim() {
      return sim as SimulatorHandle;
    },
    engine(label) {
      const engine = new Engine((server as TestRedis).url, label);
      engines.push(engine);
      return engine;
    },
    startWorker(engine, env = {}) {
      const worker = startTakeoverWorker(
        (server as TestRedis).url,
        (sim as SimulatorHandle).url,
        engine.prefix,
        env,
      );
      workers.push(worker);
      return worker;
    },
  };
}
