/**
 * The chaos drill: a fleet pause/resume cycle run by real `nightshift scheduler` and `nightshift
 * worker` processes (the built CLI, `node bin/nightshift.js`) against the simulator with faults,
 * while the drill SIGKILLs a worker every few seconds and starts it again, restarts Redis once
 * (append-only on, same port and data folder) and kills and restarts a scheduler. Then it stops
 * the chaos, lets one last tick run in quiet, and reports what ran, what was lost or duplicated,
 * what the retries cost, how long each kill took to recover from, and which state the fleet
 * ended in.
 *
 * `runChaosDrill(options)` is used by test/chaos/drill.test.ts (a short drill inside `npm test`)
 * and by bench/chaos-drill.ts (`npm run chaos`, full size). Both need `npm run build` first.
 *
 * Definitions the report uses:
 * - expected runs: every tick of the two jobs from the first tick the first scheduler announced
 *   (its `scheduler started` line) to the last tick, the quiet one, inclusive;
 * - executed: ticks whose run summary is in the run history (RunHistory, read from Redis) with
 *   an outcome of a run that started (`succeeded`, `partial` or `failed`);
 * - lost: expected ticks without such a summary (none at all, or only `missed`/`skipped`);
 * - duplicated, by run and by side effect, never by parts of one run: a tick with more than one
 *   summary; two executions of one run (or of one part of a split run, NIGHTSHIFT_RUN_PART_SIZE)
 *   with API calls in flight at the same time, by their `api call` lines (sent `durationMs`
 *   before the line); an accepted pause or resume that repeats the workspace's previous accepted
 *   call (the simulator's log). An execution that stopped (its lease ran out, or at shutdown) and
 *   the next one resuming the run may both be alive a moment, and a redelivered part that finds
 *   all its targets checkpointed ends at once: only calls are evidence of acting;
 * - never two runs of a job at once (overlap: queue): a run acts from its first API call's
 *   sending to its last call's answer, over all its executions and parts;
 * - retries spent: the sum of (attempts - 1) over the target records of every summary, and the
 *   sum of (deliveries - 1) over the summaries (runs redelivered after a kill);
 * - time to recover after a kill: for each run the killed worker was executing (it had logged
 *   `run started` for it and not `run finished`), from the SIGKILL to the `run started` of that
 *   run by another worker; a kill's recovery is the longest over its runs. A kill of a worker
 *   that was executing nothing affects no run: its recovery is "idle".
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { actionRegistry } from '../../jobs/index.js';
import { PAUSED_AGAIN } from '../../jobs/resume.js';
import type { RunSummary } from '../../src/engine/index.js';
import { nextFiring, type PolicyJob, parsePolicy } from '../../src/policy/index.js';
import { createRunQueue, scheduledRunId } from '../../src/queue/run-queue.js';
import {
  DEFAULT_API_KEY,
  type FaultConfigInput,
  type RequestLogEntry,
  type SimulatorHandle,
  startSimulator,
} from '../../src/sim/index.js';
import { Prng } from '../../src/sim/random.js';
import { RunHistory } from '../../src/store/history.js';
import { redisKeys } from '../../src/store/keys.js';
import { type LocalRedis, startLocalRedis } from '../../src/store/local-server.js';
import { createRedis } from '../../src/store/redis.js';
import { activeFleet } from './active-fleet.js';
import { eventually } from './eventually.js';
import { assertBuilt } from './nightshift-process.js';
import { HARNESS_POLICY_KEY } from './policy-key.js';

export interface ChaosDrillOptions {
  /** Workgroups in the simulated fleet; every workspace starts Active. Default 20. */
  workgroups?: number;
  /** Workspaces per workgroup. Default 10. */
  workspacesPerWorkgroup?: number;
  /**
   * Seconds from a pause tick to the next resume tick and on to the next pause; twice it must
   * divide 60 (5, 6, 10, 15 or 30). Default 10: pause at :00, :20, :40, resume at :10, :30, :50.
   */
  tickSeconds?: number;
  /** How long the chaos goes on, from the first tick. Default 40 000 ms. */
  chaosMs?: number;
  /** Mean time between two worker kills (each gap drawn within ±25 %). Default 12 000 ms. */
  killEveryMs?: number;
  /** Which worker a kill hits: one executing a run whenever there is one (`busy`), or any (`any`). Default `busy`. */
  victims?: 'busy' | 'any';
  /** How long a killed worker or scheduler stays down before it is started again. Default 1000 ms. */
  restartAfterMs?: number;
  /** When Redis is restarted, as a fraction of the chaos; null for never. Default 0.4. */
  redisRestartAt?: number | null;
  /** How long Redis stays down when it is restarted (SIGTERM, then started on the same port and data). Default 1500 ms. */
  redisDownMs?: number;
  /** When a scheduler is SIGKILLed and started again, as a fraction of the chaos; null for never. Default 0.7. */
  schedulerRestartAt?: number | null;
  /** Worker processes. Default 3. */
  workers?: number;
  /** Scheduler processes. Default 2. */
  schedulers?: number;
  /** The simulator's faults. Default 5 % 500s, 2 % hangs, a 100 req/s throttle. */
  faults?: FaultConfigInput;
  /** Duration of a pause or resume in the simulator. Default 300 ms. */
  transitionMs?: number;
  /** The jobs' `concurrency` (API calls in parallel within a run). Default 20. */
  concurrency?: number;
  /** NIGHTSHIFT_LOCK_MS of the workers: how soon a killed worker's run moves on. Default 4000 ms. */
  lockMs?: number;
  /**
   * NIGHTSHIFT_MAX_STALLS of the workers: how many times a run may lose its worker before it is
   * failed as abandoned. Default 5, the workers' own default.
   */
  maxStalls?: number;
  /** NIGHTSHIFT_POLL_INTERVAL_MS of the workers (resume's wait for Active). Default 500 ms. */
  pollIntervalMs?: number;
  /**
   * NIGHTSHIFT_RUN_PART_SIZE of the workers: a run over more workspaces is split into parts that
   * every worker works. Default 500, the workers' own default.
   */
  partSize?: number;
  /** NIGHTSHIFT_API_TIMEOUT_MS of the workers: what a hanging request costs. Default 2000 ms. */
  apiTimeoutMs?: number;
  /** The jobs' `retry.attempts` (fixed 1 s backoff, at least the server's Retry-After). Default 30. */
  retryAttempts?: number;
  /** The jobs' `overlap`. Default `queue`: every tick runs, so executed must equal expected. */
  overlap?: 'queue' | 'skip';
  /** Seed of the kill schedule, the victims and the simulator's faults. Default 1. */
  seed?: number;
  /** How long the end may take: earlier ticks' runs, the quiet tick's run, the last transitions. Default 120 000 ms. */
  settleTimeoutMs?: number;
  /** Where each process's log goes (one file per process). Default: a new folder under the OS temp dir. */
  logDir?: string;
  /** Receives a line per drill event as it happens. Default: none. */
  progress?: (line: string) => void;
}

type Resolved = Required<Omit<ChaosDrillOptions, 'progress' | 'logDir' | 'faults'>> & {
  faults: FaultConfigInput;
};

const DEFAULTS: Resolved = {
  workgroups: 20,
  workspacesPerWorkgroup: 10,
  tickSeconds: 10,
  chaosMs: 40_000,
  killEveryMs: 12_000,
  victims: 'busy',
  restartAfterMs: 1_000,
  redisRestartAt: 0.4,
  redisDownMs: 1_500,
  schedulerRestartAt: 0.7,
  workers: 3,
  schedulers: 2,
  faults: { errorRate: 0.05, hangRate: 0.02, throttleRps: 100 },
  transitionMs: 300,
  concurrency: 20,
  lockMs: 4_000,
  maxStalls: 5,
  pollIntervalMs: 500,
  partSize: 500,
  apiTimeoutMs: 2_000,
  retryAttempts: 30,
  overlap: 'queue',
  seed: 1,
  settleTimeoutMs: 120_000,
};

/** One SIGKILL of a worker, and what it cost. */
export interface KillRecord {
  /** Milliseconds since the first tick. */
  atMs: number;
  /** The process killed, e.g. `worker-2#1` (slot 2, first restart). */
  instance: string;
  /** Runs it was executing. */
  runs: string[];
  /** From the SIGKILL to the last of those runs started again by another worker; undefined when idle or never. */
  recoveryMs: number | undefined;
  /** Runs among `runs` that no worker started again. */
  unrecovered: string[];
  /** From the SIGKILL to the replacement process logging `worker started`. */
  replacementReadyMs: number | undefined;
}

export interface RestartRecord {
  what: 'redis' | 'scheduler';
  atMs: number;
  /** Redis: from the stop to listening again; scheduler: from the SIGKILL to its replacement's `scheduler started`. */
  downMs: number;
  /** Redis: from the stop to the last process logging `Redis connection restored`. */
  reconnectedMs?: number | undefined;
  detail?: string;
}

export interface Goal {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ChaosDrillReport {
  options: Resolved & { fleet: string };
  startedAt: string;
  durationMs: number;
  /** os.loadavg() (1, 5, 15 min) at the start and at the end. */
  loadAverage: { start: number[]; end: number[] };
  logDir: string;
  ticks: {
    expected: number;
    executed: number;
    lost: string[];
    duplicated: string[];
    /** Summaries for ticks after the last expected one (should be none). */
    unexpected: string[];
    outcomes: Record<string, number>;
    catchUps: number;
    firstTick: string;
    lastTick: string;
    lastAction: string;
  };
  targets: {
    records: number;
    succeeded: number;
    skipped: number;
    failed: number;
    /**
     * Of the failed, resume targets the other job's run paused again while the resume waited for
     * them (a pause and a resume run at once, see `overlappingRuns`): the drill's own schedule
     * did that, not a fault of the engine; the end state is judged after a quiet tick.
     */
    reversed: number;
    /** Why targets were skipped, with counts (e.g. `already Active`, `not Active: Resuming`). */
    skipReasons: Record<string, number>;
    /**
     * Pairs of a pause run and a resume run that were executing at the same time (a run slowed
     * down by kills running into the other job's next tick): their targets may be skipped as
     * mid-transition, which is why the end state is judged after a last tick run in quiet.
     */
    overlappingRuns: number;
    /** Pairs of runs of one job whose first starts came out of tick order (queued runs take turns in no set order). */
    outOfTickOrder: number;
  };
  desiredState: { expected: string; total: number; inState: number; percent: number; notInState: string[] };
  retries: {
    /** Sum of (attempts - 1) over target records. */
    targetRetries: number;
    /** Sum of (deliveries - 1) over run summaries. */
    redeliveries: number;
    /** Runs delivered more than once. */
    runsRedelivered: number;
  };
  api: {
    calls: number;
    injected: { error: number; hang: number; throttle: number; drop: number };
    pauses: number;
    resumes: number;
    /** Pause/resume calls refused because the workspace was already there (a redundant call). */
    refusedAsAlreadyDone: number;
    /** Two accepted mutations of one kind in a row on one workspace (a duplicated effect). */
    doubleMutations: number;
  };
  kills: KillRecord[];
  restarts: RestartRecord[];
  /** Processes that exited without the drill stopping them. */
  unexpectedExits: string[];
  /** Lines logged at error level or above, by message (the first few). */
  errorLines: Record<string, number>;
  /** Runs BullMQ holds as failed (e.g. stalled too often), with the reason. */
  bullFailed: string[];
  goals: Goal[];
  ok: boolean;
}

const BIN = fileURLToPath(new URL('../../bin/nightshift.js', import.meta.url));

/** Throws unless `npm run build` has run since any source last changed: the processes run the built CLI. */
export function assertDistFresh(): void {
  assertBuilt();
}

/** The drill's policy: a pause and a resume of every workspace, alternating every `tickSeconds`. */
export function drillPolicy(
  options: Pick<Resolved, 'tickSeconds' | 'concurrency' | 'retryAttempts' | 'overlap'>,
): string {
  const step = options.tickSeconds;
  if (!Number.isInteger(step) || step < 1 || 60 % (2 * step) !== 0)
    throw new RangeError(`tickSeconds: twice it must divide 60, got ${step}`);
  const pauses: number[] = [];
  const resumes: number[] = [];
  for (let second = 0; second < 60; second += 2 * step) {
    pauses.push(second);
    resumes.push(second + step);
  }
  return `version: 1
defaults:
  timezone: UTC
  retry: { attempts: ${options.retryAttempts}, backoff: 1s, strategy: fixed }
  overlap: ${options.overlap}
  concurrency: ${options.concurrency}
  timeout: 10m
targets:
  fleet: { workgroups: ["*"] }
jobs:
  drill-pause:
    schedule: "${pauses.join(',')} * * * * *"
    action: pause
    target: fleet
  drill-resume:
    schedule: "${resumes.join(',')} * * * * *"
    action: resume
    target: fleet
    with: { waitReady: 2m }
`;
}

/** A log line of a nightshift process, as the drill reads it (pino JSON). */
interface LogLine {
  level: number;
  time: number;
  msg: string;
  runId?: string;
  outcome?: string;
  jobs?: { job: string; next?: string }[];
  /** The part of a split run (`run started`, `run part finished`). */
  part?: number;
  /** How many targets a run split into parts (`run split into parts`). */
  targets?: number;
  counts?: { total?: number };
  /** The execution a line of a run comes from (`run started`, `api call`). */
  execution?: string;
  /** How long an API call took (`api call`, `api call failed`): it was sent that long before its line. */
  durationMs?: number;
}

/** An execution whose lease ran out logs this once it has stopped, its calls unwound. */
const LEASE_STOPPED =
  'run stopped: its lease ran out unconfirmed; the next delivery resumes it from its checkpoints';

/** Lines the drill reads; the others only go to the process's log file. */
const READ = new Set([
  'worker started',
  'scheduler started',
  'run started',
  'run finished',
  'run split into parts',
  'run part finished',
  LEASE_STOPPED,
  'run handed back to the queue at shutdown',
  'run part handed back to the queue at shutdown',
  'target done',
  'api call',
  'api call failed',
  'Redis connection restored',
]);

interface Proc {
  role: 'worker' | 'scheduler';
  slot: number;
  instance: string;
  child: ChildProcess;
  startedAt: number;
  readyAt?: number;
  /** Set when the drill stops or kills it; an exit without it is unexpected. */
  stopping?: NodeJS.Signals;
  killedAt?: number;
  exited: Promise<void>;
  exitedAt?: number;
  /** Runs it has logged `run started` for and not `run finished`. */
  active: Set<string>;
}

interface Execution {
  /** The run, or `<runId>#<part>` for a part of a split run. */
  runId: string;
  instance: string;
  startedAt: number;
  endedAt: number | undefined;
  /** `handed back`: it stopped and gave the run back to the queue, for the next execution to resume. */
  end: 'finished' | 'handed back' | 'killed' | 'stopped' | undefined;
  /** The execution's lease token (its lines' `execution`): a part the run works itself shares the run's. */
  token: string | undefined;
}

/** An API call a run made, from its log line. */
interface Call {
  /** The run, or `<runId>#<part>` for a part of a split run. */
  unit: string;
  runId: string;
  execution: string;
  sentAt: number;
  answeredAt: number;
}

/** Everything the drill learns from the processes' logs. */
class Observed {
  readonly executions: Execution[] = [];
  readonly calls: Call[] = [];
  readonly starts = new Map<string, Execution[]>();
  /** First `target done` per run after a given time is what recovery needs: times per run. */
  readonly targetDone = new Map<string, number[]>();
  readonly restored: { instance: string; at: number }[] = [];
  readonly errors = new Map<string, number>();
  readonly schedulerStarts: { instance: string; at: number; jobs: { job: string; next?: string }[] }[] = [];
  /** Runs split into parts, with how many targets each split. */
  readonly #splitTargets = new Map<string, number>();

  line(proc: Proc, line: LogLine): void {
    if (line.level >= 50) this.errors.set(line.msg, (this.errors.get(line.msg) ?? 0) + 1);
    switch (line.msg) {
      case 'worker started':
        proc.readyAt ??= line.time;
        break;
      case 'scheduler started':
        proc.readyAt ??= line.time;
        this.schedulerStarts.push({ instance: proc.instance, at: line.time, jobs: line.jobs ?? [] });
        break;
      case 'run started': {
        if (!line.runId) break;
        // a part of a split run is executed on its own: `<runId>#<part>`
        const run = line.part === undefined ? line.runId : `${line.runId}#${line.part}`;
        proc.active.add(run);
        const execution: Execution = {
          runId: run,
          instance: proc.instance,
          startedAt: line.time,
          endedAt: undefined,
          end: undefined,
          token: line.execution,
        };
        this.executions.push(execution);
        const list = this.starts.get(run) ?? [];
        list.push(execution);
        this.starts.set(run, list);
        break;
      }
      case 'run split into parts':
        if (line.runId && line.targets !== undefined) this.#splitTargets.set(line.runId, line.targets);
        break;
      case 'run part finished':
        if (line.runId && line.part !== undefined)
          this.#finished(proc, `${line.runId}#${line.part}`, line.time);
        break;
      case LEASE_STOPPED:
      case 'run part handed back to the queue at shutdown':
        if (!line.runId) break;
        if (line.part === undefined) this.#stoppedWithParts(proc, line.runId, line.time);
        else this.#finished(proc, `${line.runId}#${line.part}`, line.time, 'handed back');
        break;
      case 'run handed back to the queue at shutdown':
        if (line.runId) this.#finished(proc, line.runId, line.time, 'handed back');
        break;
      case 'run finished': {
        if (!line.runId) break;
        // a part logs `run finished` too, without its index (its `run part finished` follows); the
        // run itself is the one whose count is all the targets it split
        const split = this.#splitTargets.get(line.runId);
        if (split === undefined || line.counts?.total === split) this.#finished(proc, line.runId, line.time);
        break;
      }
      case 'target done': {
        if (!line.runId) break;
        const list = this.targetDone.get(line.runId) ?? [];
        list.push(line.time);
        this.targetDone.set(line.runId, list);
        break;
      }
      case 'api call':
      case 'api call failed':
        if (line.runId && line.execution)
          this.calls.push({
            unit: line.part === undefined ? line.runId : `${line.runId}#${line.part}`,
            runId: line.runId,
            execution: line.execution,
            sentAt: line.time - (line.durationMs ?? 0),
            answeredAt: line.time,
          });
        break;
      case 'Redis connection restored':
        this.restored.push({ instance: proc.instance, at: line.time });
        break;
    }
  }

  /**
   * A run's execution handed back: the parts it was working itself (under its lease, so with its
   * token) stopped with it, without a line of their own.
   */
  #stoppedWithParts(proc: Proc, runId: string, at: number): void {
    const open = this.starts.get(runId)?.find((e) => e.instance === proc.instance && !e.end);
    if (open?.token)
      for (const execution of this.executions)
        if (
          execution.instance === proc.instance &&
          !execution.end &&
          execution.token === open.token &&
          execution.runId.startsWith(`${runId}#`)
        )
          this.#finished(proc, execution.runId, at, 'handed back');
    this.#finished(proc, runId, at, 'handed back');
  }

  #finished(proc: Proc, run: string, at: number, end: Execution['end'] = 'finished'): void {
    proc.active.delete(run);
    const open = this.starts.get(run)?.find((e) => e.instance === proc.instance && !e.end);
    if (open) Object.assign(open, { endedAt: at, end });
  }

  /** Closes the executions of a process that died or was stopped; returns their runs. */
  ended(proc: Proc, at: number, end: 'killed' | 'stopped'): string[] {
    const runs: string[] = [];
    for (const execution of this.executions) {
      if (execution.instance !== proc.instance || execution.end) continue;
      Object.assign(execution, { endedAt: at, end });
      runs.push(execution.runId);
    }
    proc.active.clear();
    return runs;
  }
}

/**
 * Runs the drill and reports. Never throws for a failed goal (the report says which); throws
 * only when the drill itself cannot run (no redis-server, dist/ missing, a process that never
 * starts). Every process, Redis and the simulator are stopped before it returns.
 */
export async function runChaosDrill(input: ChaosDrillOptions = {}): Promise<ChaosDrillReport> {
  const options: Resolved = { ...DEFAULTS, ...stripUndefined(input) } as Resolved;
  const progress = input.progress ?? (() => {});
  const began = Date.now();
  const loadStart = loadavg();
  const logDir = input.logDir ?? mkdtempSync(join(tmpdir(), 'nightshift-chaos-'));
  mkdirSync(logDir, { recursive: true });
  const policyText = drillPolicy(options);
  const policyFile = join(logDir, 'policy.yaml');
  writeFileSync(policyFile, policyText);
  const policy = parsePolicy(policyText, policyFile, { registry: actionRegistry, env: {} });
  const jobs = new Map(policy.jobs.map((job) => [job.name, job]));
  const rng = new Prng(options.seed);
  const prefix = `chaos-${options.seed}-${began.toString(36)}`;
  const keys = redisKeys(prefix);
  const observed = new Observed();
  const procs: Proc[] = [];
  const instancesPerSlot = new Map<string, number>();
  const kills: KillRecord[] = [];
  const restarts: RestartRecord[] = [];
  let firstTick = 0;
  const rel = (at: number) => at - firstTick;

  let server: LocalRedis | undefined;
  let sim: SimulatorHandle | undefined;
  let redis: Redis | undefined;
  let queue: ReturnType<typeof createRunQueue> | undefined;
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

    const env: Record<string, string> = {
      REDIS_URL: server.url,
      NIGHTSHIFT_REDIS_PREFIX: prefix,
      NIGHTSHIFT_API_URL: sim.url,
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

    const start = (role: 'worker' | 'scheduler', slot: number): Proc => {
      const name = `${role}-${slot}`;
      const generation = instancesPerSlot.get(name) ?? 0;
      instancesPerSlot.set(name, generation + 1);
      const instance = `${name}#${generation}`;
      const args = role === 'worker' ? ['worker'] : ['scheduler', policyFile];
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const file = createWriteStream(join(logDir, `${instance.replace('#', '.')}.log`));
      const proc: Proc = {
        role,
        slot,
        instance,
        child,
        startedAt: Date.now(),
        active: new Set(),
        // 'close', not 'exit': every line the process wrote has been read by then
        exited: new Promise((resolve) => {
          child.once('close', (code, signal) => {
            proc.exitedAt = Date.now();
            if (!proc.stopping) {
              progress(`!! ${instance} exited on its own (${code ?? signal})`);
              observed.ended(proc, proc.exitedAt, 'killed');
            }
            file.end(`\n# exit ${code ?? signal}\n`);
            resolve();
          });
        }),
      };
      let carry = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        file.write(chunk);
        const text = carry + chunk.toString('utf8');
        const lines = text.split('\n');
        carry = lines.pop() ?? '';
        for (const raw of lines) {
          const msg = /"msg":"((?:[^"\\]|\\.)*)"/.exec(raw)?.[1];
          const level = Number(/"level":(\d+)/.exec(raw)?.[1] ?? 0);
          if (msg === undefined || (!READ.has(msg) && level < 50)) continue;
          let line: LogLine & { time: number | string };
          try {
            line = JSON.parse(raw);
          } catch {
            continue; // a line cut short by SIGKILL
          }
          // pino writes the time as an ISO string (src/log/logger.ts) or as epoch milliseconds
          observed.line(proc, {
            ...line,
            time: typeof line.time === 'string' ? Date.parse(line.time) : line.time,
          });
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => file.write(chunk));
      procs.push(proc);
      return proc;
    };
    const alive = (role: 'worker' | 'scheduler') =>
      procs.filter((p) => p.role === role && p.exitedAt === undefined && !p.stopping);
    const ready = (proc: Proc, what: string) =>
      eventually(
        `${proc.instance} ${what}`,
        () => proc.readyAt !== undefined || proc.exitedAt !== undefined,
        30_000,
        50,
      ).then(() => {
        if (proc.exitedAt !== undefined)
          throw new Error(`${proc.instance} exited during start; see ${logDir}`);
      });
    /** Stops a process and waits for it; returns the runs it was executing. */
    const stop = async (proc: Proc, signal: NodeJS.Signals): Promise<string[]> => {
      proc.stopping = signal;
      if (proc.exitedAt === undefined) {
        if (signal === 'SIGKILL') proc.killedAt = Date.now();
        proc.child.kill(signal);
      }
      await proc.exited;
      return signal === 'SIGKILL'
        ? observed.ended(proc, proc.killedAt ?? Date.now(), 'killed')
        : observed.ended(proc, Date.now(), 'stopped');
    };

    // workers first, so the first tick finds them waiting
    const initialWorkers = Array.from({ length: options.workers }, (_, i) => start('worker', i + 1));
    await Promise.all(initialWorkers.map((p) => ready(p, 'worker started')));
    const initialSchedulers = Array.from({ length: options.schedulers }, (_, i) => start('scheduler', i + 1));
    await Promise.all(initialSchedulers.map((p) => ready(p, 'scheduler started')));
    const firstByJob = new Map<string, number>();
    for (const started of observed.schedulerStarts) {
      for (const { job, next } of started.jobs) {
        if (!next) continue;
        const at = Date.parse(next);
        firstByJob.set(job, Math.min(firstByJob.get(job) ?? Number.POSITIVE_INFINITY, at));
      }
    }
    if (firstByJob.size !== jobs.size)
      throw new Error(`schedulers announced ${firstByJob.size} jobs, expected ${jobs.size}`);
    firstTick = Math.min(...firstByJob.values());
    progress(
      `${options.workers} workers and ${options.schedulers} schedulers up; first tick ${new Date(firstTick).toISOString()}`,
    );

    // ---- the chaos ----------------------------------------------------------------------
    type Event = { at: number; kind: 'kill' | 'redis' | 'scheduler' };
    const events: Event[] = [];
    if (options.redisRestartAt !== null)
      events.push({ at: options.redisRestartAt * options.chaosMs, kind: 'redis' });
    if (options.schedulerRestartAt !== null)
      events.push({ at: options.schedulerRestartAt * options.chaosMs, kind: 'scheduler' });
    // kills keep 3 s away from the other events, so each recovery is measured on its own
    for (let at = options.killEveryMs * (0.75 + rng.next() * 0.5); at < options.chaosMs; ) {
      const clash = events.find((e) => e.kind !== 'kill' && Math.abs(e.at - at) < 3_000);
      if (clash) at = clash.at + 3_000;
      else {
        events.push({ at, kind: 'kill' });
        at += options.killEveryMs * (0.75 + rng.next() * 0.5);
      }
    }
    events.sort((a, b) => a.at - b.at);
    await sleep(Math.max(0, firstTick - Date.now()));
    progress(
      `chaos for ${options.chaosMs / 1000} s: ${events.filter((e) => e.kind === 'kill').length} kills, ${events.length - events.filter((e) => e.kind === 'kill').length} restarts`,
    );
    const replacements: Promise<void>[] = [];
    // a replacement that never starts fails the drill where they are awaited, after the chaos,
    // inside this try: not as an unhandled rejection that ends the drill before its finally
    // stops what it started
    const replace = (restart: () => Promise<void>) => {
      const replacement = restart();
      replacement.catch(() => {});
      replacements.push(replacement);
    };

    for (const event of events) {
      await sleep(Math.max(0, firstTick + event.at - Date.now()));
      if (event.kind === 'kill') {
        // a replacement still starting (slow on a loaded machine) is not killed: its start is awaited
        const candidates = alive('worker').filter((p) => p.readyAt !== undefined);
        if (candidates.length === 0) continue;
        const busy = candidates.filter((p) => p.active.size > 0);
        const victim = rng.pick(options.victims === 'busy' && busy.length > 0 ? busy : candidates);
        const runs = await stop(victim, 'SIGKILL');
        const killedAt = victim.killedAt as number;
        const record: KillRecord = {
          atMs: rel(killedAt),
          instance: victim.instance,
          runs,
          recoveryMs: undefined,
          unrecovered: [],
          replacementReadyMs: undefined,
        };
        kills.push(record);
        progress(
          `${(rel(killedAt) / 1000).toFixed(1)} s: SIGKILL ${victim.instance}${runs.length ? ` executing ${runs.join(', ')}` : ' (idle)'}`,
        );
        replace(async () => {
          await sleep(options.restartAfterMs);
          const next = start('worker', victim.slot);
          await ready(next, 'worker started');
          record.replacementReadyMs = (next.readyAt as number) - killedAt;
        });
      } else if (event.kind === 'redis') {
        const at = Date.now();
        const inFlight = alive('worker').flatMap((p) => [...p.active]);
        await server.halt();
        await sleep(options.redisDownMs);
        await server.restart();
        const downMs = Date.now() - at;
        restarts.push({ what: 'redis', atMs: rel(at), downMs, detail: inFlight.join(', ') });
        progress(
          `${(rel(at) / 1000).toFixed(1)} s: Redis stopped and started again (down ${downMs} ms)${inFlight.length ? ` during ${inFlight.join(', ')}` : ''}`,
        );
      } else {
        const victim = rng.pick(alive('scheduler'));
        await stop(victim, 'SIGKILL');
        const at = victim.killedAt as number;
        const record: RestartRecord = {
          what: 'scheduler',
          atMs: rel(at),
          downMs: 0,
          detail: victim.instance,
        };
        restarts.push(record);
        progress(`${(rel(at) / 1000).toFixed(1)} s: SIGKILL ${victim.instance}`);
        replace(async () => {
          await sleep(options.restartAfterMs);
          const next = start('scheduler', victim.slot);
          await ready(next, 'scheduler started');
          record.downMs = (next.readyAt as number) - at;
        });
      }
    }
    await sleep(Math.max(0, firstTick + options.chaosMs - Date.now()));
    await Promise.all(replacements);
    const chaosEnd = Date.now();
    progress(`${(rel(chaosEnd) / 1000).toFixed(1)} s: chaos over; waiting for the runs of past ticks`);

    // ---- quiet: past ticks' runs finish, then one last tick runs on its own ------------------
    const settleDeadline = Date.now() + options.settleTimeoutMs;
    const ticksBetween = (job: PolicyJob, from: number, to: number): number[] => {
      const out: number[] = [];
      for (let f = nextFiring(job.schedule, new Date(from - 1)); f && f.at.getTime() <= to; ) {
        out.push(f.at.getTime());
        f = nextFiring(job.schedule, f.at);
      }
      return out;
    };
    // a tick is settled once its run is recorded, or will never be: BullMQ failed its job (a run
    // stalled too often), or no scheduler enqueued it at all
    const settled = async (job: string, at: number) => {
      const runId = scheduledRunId(job, new Date(at));
      if ((await history.get(runId)) !== undefined) return true;
      const state = await runQueue.getJobState(runId);
      return state === 'failed' || (state === 'unknown' && Date.now() - at > 10_000);
    };
    let quietFrom = 0;
    let settledInTime = true;
    await eventually(
      'runs of the ticks before the end settled',
      async () => {
        const now = Date.now();
        for (const [name, job] of jobs) {
          for (const at of ticksBetween(job, firstByJob.get(name) as number, now)) {
            if (!(await settled(name, at))) return false;
          }
        }
        quietFrom = now;
        return true;
      },
      Math.max(1_000, settleDeadline - Date.now()),
      250,
    ).catch((error: unknown) => {
      settledInTime = false;
      quietFrom = Date.now();
      progress(`!! ${(error as Error).message}`);
    });
    // the last tick: the first one a little after every earlier run was recorded
    const lead = 2_000;
    let last = { job: '', at: Number.POSITIVE_INFINITY };
    for (const [name, job] of jobs) {
      const next = nextFiring(job.schedule, new Date(quietFrom))?.at.getTime() ?? Number.POSITIVE_INFINITY;
      if (next < last.at) last = { job: name, at: next };
    }
    progress(
      `${(rel(quietFrom) / 1000).toFixed(1)} s: all past ticks recorded; last tick ${last.job} at ${new Date(last.at).toISOString()}`,
    );
    // stop the schedulers once the last tick is handed over, before they hand over the next one
    await eventually(
      'the last tick handed to the queue',
      async () => Number((await redis?.get(keys.lastTick(last.job))) ?? 0) >= last.at,
      Math.max(1_000, last.at - Date.now() + 30_000),
      50,
    );
    await Promise.all(alive('scheduler').map((p) => stop(p, 'SIGTERM')));
    const lastTickAt = last.at;
    if (Date.now() > lastTickAt + options.tickSeconds * 1000 - lead)
      progress('!! the schedulers stopped late: a tick after the last may have been handed over');
    const lastJob = last.job;
    const lastSummary = await eventually(
      `the last run (${lastJob} at ${new Date(lastTickAt).toISOString()}) recorded`,
      async () => history.get(scheduledRunId(lastJob, new Date(lastTickAt))),
      Math.max(1_000, settleDeadline - Date.now() + 30_000),
      250,
    ).catch(() => undefined);
    const lastAction = jobs.get(lastJob)?.action ?? '?';
    const desired = lastAction === 'pause' ? 'Stopped' : 'Active';
    // a pause leaves workspaces Stopping for the transition
    await eventually(
      'transitions over',
      () => sim?.state.workspaces.every((ws) => ws.status === desired) || undefined,
      options.transitionMs + 5_000,
      100,
    ).catch(() => undefined);
    const notInState = sim.state.workspaces
      .filter((ws) => ws.status !== desired)
      .map((ws) => `${ws.workgroup_id}/${ws.workspace_id}: ${ws.status}`);
    progress(
      `last run ${lastSummary?.outcome ?? 'not recorded'}; ${total - notInState.length}/${total} workspaces ${desired}`,
    );

    await Promise.all(alive('worker').map((p) => stop(p, 'SIGTERM')));

    // ---- the report ---------------------------------------------------------------------
    const summaries: RunSummary[] = [];
    for (const name of jobs.keys()) summaries.push(...(await history.list({ job: name, limit: 10_000 })));
    const failedJobs = new Map(
      (await runQueue.getJobs(['failed'], 0, 1000)).map((job) => [job.id as string, job.failedReason]),
    );
    const bullFailed = [...failedJobs].map(([id, reason]) => `${id}: ${reason}`);

    const expected: { job: string; at: number }[] = [];
    for (const [name, job] of jobs) {
      for (const at of ticksBetween(job, firstByJob.get(name) as number, lastTickAt))
        expected.push({ job: name, at });
    }
    const tickKey = (job: string, at: number) => `${job}@${new Date(at).toISOString()}`;
    const byTick = new Map<string, RunSummary[]>();
    for (const summary of summaries) {
      if (!summary.scheduledAt) continue;
      const key = tickKey(summary.job, Date.parse(summary.scheduledAt));
      byTick.set(key, [...(byTick.get(key) ?? []), summary]);
    }
    const expectedKeys = new Set(expected.map((t) => tickKey(t.job, t.at)));
    const ran = (s: RunSummary) =>
      s.outcome === 'succeeded' || s.outcome === 'partial' || s.outcome === 'failed';
    const lost: string[] = [];
    const duplicated: string[] = [];
    let executed = 0;
    for (const key of expectedKeys) {
      const found = byTick.get(key) ?? [];
      const tick = expected.find((t) => tickKey(t.job, t.at) === key) as { job: string; at: number };
      const failedReason = failedJobs.get(scheduledRunId(tick.job, new Date(tick.at)));
      if (found.some(ran)) executed++;
      else
        lost.push(
          found.length
            ? `${key} (${found.map((s) => `${s.outcome}: ${s.reason ?? ''}`).join('; ')})`
            : failedReason
              ? `${key} (failed in BullMQ, no summary: ${failedReason})`
              : key,
        );
      if (found.length > 1)
        duplicated.push(`${key}: ${found.length} summaries (${found.map((s) => s.runId).join(', ')})`);
    }
    const unexpected = [...byTick.keys()].filter((key) => !expectedKeys.has(key));
    // a run (or part) executed twice at once: two of its executions had API calls in flight at the
    // same time. An execution whose lease ran out and the one resuming it are both alive a moment
    // (the first unwinds, logs, lets go), and a redelivery of a finished part finds it all
    // checkpointed: only calls are evidence of acting.
    for (const [unit, calls] of groupBy(observed.calls, (call) => call.unit)) {
      const spans = [...groupBy(calls, (call) => call.execution)].map(([execution, own]) => ({
        execution,
        ...callSpan(own),
      }));
      for (const [index, first] of spans.entries())
        for (const second of spans.slice(index + 1))
          if (first.from < second.to && second.from < first.to)
            duplicated.push(
              `${unit}: executions ${first.execution} and ${second.execution} made API calls at once`,
            );
    }
    const api = apiFigures(sim.requests());
    if (api.doubleMutations > 0)
      duplicated.push(
        `${api.doubleMutations} accepted pause or resume calls repeated the workspace's previous accepted call`,
      );

    // overlap: queue: never two runs of a job acting at once, a run cut by a kill counting as
    // acting from its first API call to its last answer, its parts' included. (The order among
    // queued runs is not promised: each waits for the lock, and the first to find it free goes;
    // those starts are only counted.)
    const atOnce: string[] = [];
    let outOfTickOrder = 0;
    for (const name of jobs.keys()) {
      const spans = expected
        .filter((tick) => tick.job === name)
        .sort((a, b) => a.at - b.at)
        .flatMap((tick) => {
          const runId = scheduledRunId(name, new Date(tick.at));
          const executions = observed.starts.get(runId) ?? [];
          const calls = observed.calls.filter((call) => call.runId === runId);
          if (executions.length === 0) return [];
          return [
            {
              runId,
              startedAt: Math.min(...executions.map((e) => e.startedAt)),
              ...(calls.length ? callSpan(calls) : { from: 0, to: 0 }),
            },
          ];
        });
      for (const [index, span] of spans.entries()) {
        for (const later of spans.slice(index + 1)) {
          if (later.startedAt < span.startedAt) outOfTickOrder++;
          if (later.from < span.to && span.from < later.to)
            atOnce.push(
              `${span.runId} and ${later.runId} made API calls at once for ${Math.round(Math.min(span.to, later.to) - Math.max(span.from, later.from))} ms`,
            );
        }
      }
    }

    const outcomes: Record<string, number> = {};
    let catchUps = 0;
    const targets = {
      records: 0,
      succeeded: 0,
      skipped: 0,
      failed: 0,
      reversed: 0,
      skipReasons: {} as Record<string, number>,
      overlappingRuns: 0,
      outOfTickOrder,
    };
    let targetRetries = 0;
    let redeliveries = 0;
    let runsRedelivered = 0;
    for (const summary of summaries) {
      outcomes[summary.outcome] = (outcomes[summary.outcome] ?? 0) + 1;
      if (summary.trigger === 'catch-up') catchUps++;
      const deliveries = summary.deliveries ?? 1;
      redeliveries += Math.max(0, deliveries - 1);
      if (deliveries > 1) runsRedelivered++;
      for (const target of summary.targets) {
        targets.records++;
        if (target.outcome === 'succeeded') targets.succeeded++;
        else if (target.outcome === 'skipped') {
          targets.skipped++;
          // counted by kind: the time in `paused by job … since <time>` differs for every workspace
          const reason = (target.reason ?? '(none)').replace(/ since \d{4}-\d\d-\d\dT[\d:.]+Z/, '');
          targets.skipReasons[reason] = (targets.skipReasons[reason] ?? 0) + 1;
        } else if (target.outcome === 'failed') {
          targets.failed++;
          if (target.error?.message.includes(PAUSED_AGAIN)) targets.reversed++;
        }
        targetRetries += Math.max(0, target.attempts - 1);
      }
    }

    const spans = summaries.flatMap((summary) =>
      summary.startedAt && summary.finishedAt
        ? [{ job: summary.job, from: Date.parse(summary.startedAt), to: Date.parse(summary.finishedAt) }]
        : [],
    );
    for (const [index, a] of spans.entries()) {
      for (const b of spans.slice(index + 1))
        if (a.job !== b.job && a.from < b.to && b.from < a.to) targets.overlappingRuns++;
    }

    // recovery after each kill
    for (const kill of kills) {
      const killedAt = firstTick + kill.atMs;
      let worst = 0;
      for (const runId of kill.runs) {
        const resumed = (observed.starts.get(runId) ?? []).find(
          (e) => e.instance !== kill.instance && e.startedAt >= killedAt,
        );
        if (resumed) worst = Math.max(worst, resumed.startedAt - killedAt);
        else kill.unrecovered.push(runId);
      }
      kill.recoveryMs =
        kill.runs.length > 0 && kill.unrecovered.length < kill.runs.length ? worst : undefined;
    }
    for (const restart of restarts) {
      if (restart.what !== 'redis') continue;
      const at = firstTick + restart.atMs;
      const after = observed.restored.filter((r) => r.at >= at && r.at <= at + 60_000);
      if (after.length > 0) restart.reconnectedMs = Math.max(...after.map((r) => r.at)) - at;
    }

    const unexpectedExits = procs
      .filter((p) => p.exitedAt !== undefined && !p.stopping)
      .map((p) => `${p.instance} (log: ${join(logDir, `${p.instance.replace('#', '.')}.log`)})`);
    const percent = total === 0 ? 100 : Math.round(((total - notInState.length) / total) * 10_000) / 100;
    const goals: Goal[] = [
      {
        name: 'runs executed = runs expected',
        ok: executed === expected.length && lost.length === 0,
        detail: `${executed} / ${expected.length}`,
      },
      { name: 'no run lost', ok: lost.length === 0, detail: lost.length ? lost.slice(0, 5).join('; ') : '0' },
      {
        name: 'no run duplicated',
        ok: duplicated.length === 0,
        detail: duplicated.length ? duplicated.slice(0, 5).join('; ') : '0',
      },
      {
        name: 'no summary for a tick outside the drill',
        ok: unexpected.length === 0,
        detail: unexpected.join('; ') || '0',
      },
      {
        name: 'targets in their desired state at the end',
        ok: notInState.length === 0,
        detail: `${percent} % (${total - notInState.length} / ${total} ${desired} after the last ${lastAction})`,
      },
      {
        name: 'no target failed (but those the other job reversed meanwhile)',
        ok: targets.failed === targets.reversed,
        detail: `${targets.failed - targets.reversed} (${targets.reversed} reversed)`,
      },
      {
        name: 'past ticks settled after the chaos',
        ok: settledInTime,
        detail: settledInTime ? 'yes' : `not within ${options.settleTimeoutMs / 1000} s`,
      },
      ...(options.overlap === 'queue'
        ? [
            {
              name: 'never two runs of a job at once (overlap: queue), kills included',
              ok: atOnce.length === 0,
              detail: atOnce.slice(0, 5).join('; ') || '0',
            },
          ]
        : []),
      {
        name: 'no process exited unless stopped',
        ok: unexpectedExits.length === 0,
        detail: unexpectedExits.join('; ') || '0',
      },
      {
        name: 'every killed run recovered',
        ok: kills.every((k) => k.unrecovered.length === 0),
        detail: kills.flatMap((k) => k.unrecovered).join('; ') || '0',
      },
    ];

    return {
      options: { ...options, fleet: `${options.workgroups}x${options.workspacesPerWorkgroup}` },
      startedAt: new Date(began).toISOString(),
      durationMs: Date.now() - began,
      loadAverage: { start: loadStart, end: loadavg() },
      logDir,
      ticks: {
        expected: expected.length,
        executed,
        lost,
        duplicated,
        unexpected,
        outcomes,
        catchUps,
        firstTick: new Date(firstTick).toISOString(),
        lastTick: new Date(lastTickAt).toISOString(),
        lastAction,
      },
      targets,
      desiredState: { expected: desired, total, inState: total - notInState.length, percent, notInState },
      retries: { targetRetries, redeliveries, runsRedelivered },
      api,
      kills,
      restarts,
      unexpectedExits,
      errorLines: Object.fromEntries(observed.errors),
      bullFailed,
      goals,
      ok: goals.every((g) => g.ok),
    };
  } finally {
    await Promise.all(
      procs.map(async (p) => {
        if (p.exitedAt === undefined) {
          p.stopping ??= 'SIGKILL';
          p.child.kill('SIGKILL');
          await p.exited;
        }
      }),
    );
    await queue?.close();
    redis?.disconnect();
    await sim?.close();
    await server?.stop();
  }
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

/** From the first call's sending to the last call's answer. */
function callSpan(calls: readonly Call[]): { from: number; to: number } {
  return {
    from: Math.min(...calls.map((call) => call.sentAt)),
    to: Math.max(...calls.map((call) => call.answeredAt)),
  };
}

function apiFigures(requests: readonly RequestLogEntry[]): ChaosDrillReport['api'] {
  const injected = { error: 0, hang: 0, throttle: 0, drop: 0 };
  let pauses = 0;
  let resumes = 0;
  let refusedAsAlreadyDone = 0;
  let doubleMutations = 0;
  const lastMutation = new Map<string, string>();
  for (const entry of requests) {
    if (entry.fault && entry.fault !== 'latency') injected[entry.fault]++;
    if (entry.operation !== 'pauseWorkspace' && entry.operation !== 'resumeWorkspace') continue;
    if (entry.status === 400) refusedAsAlreadyDone++;
    if (entry.status !== 200) continue;
    if (entry.operation === 'pauseWorkspace') pauses++;
    else resumes++;
    const workspace = entry.path.split('/').at(-2) as string;
    if (lastMutation.get(workspace) === entry.operation) doubleMutations++;
    lastMutation.set(workspace, entry.operation);
  }
  return { calls: requests.length, injected, pauses, resumes, refusedAsAlreadyDone, doubleMutations };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const seconds = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);

/** The report as Markdown tables: the goals, the figures, every kill and restart. */
export function formatReport(report: ChaosDrillReport): string {
  const o = report.options;
  const f = o.faults;
  const lines: string[] = [];
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  lines.push(
    `Chaos drill, ${report.startedAt}: fleet ${o.fleet} (${report.desiredState.total} workspaces), ${o.workers} workers, ${o.schedulers} schedulers, ` +
      `ticks every ${o.tickSeconds} s, chaos ${o.chaosMs / 1000} s, seed ${o.seed}; ` +
      `faults: ${((f.errorRate ?? 0) * 100).toFixed(0)} % 500s, ${((f.hangRate ?? 0) * 100).toFixed(0)} % hangs, throttle ${f.throttleRps ?? 'off'} req/s; ` +
      `lock ${o.lockMs} ms, up to ${o.maxStalls} stalls a run, API timeout ${o.apiTimeoutMs} ms, parts of ${o.partSize}, overlap ${o.overlap}. ` +
      `Took ${seconds(report.durationMs)}; load average ${load(report.loadAverage.start)} at the start, ${load(report.loadAverage.end)} at the end.`,
  );
  lines.push('', '| goal | result | figure |', '|---|---|---|');
  for (const goal of report.goals)
    lines.push(`| ${goal.name} | ${goal.ok ? 'ok' : '**FAILED**'} | ${goal.detail.replace(/\|/g, '\\|')} |`);
  const t = report.ticks;
  const a = report.api;
  lines.push(
    '',
    '| figure | value |',
    '|---|---|',
    `| runs expected / executed | ${t.expected} / ${t.executed} (${t.firstTick} to ${t.lastTick}) |`,
    `| run outcomes | ${Object.entries(t.outcomes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}${t.catchUps ? `; ${t.catchUps} catch-up` : ''} |`,
    `| lost / duplicated | ${t.lost.length} / ${t.duplicated.length} |`,
    `| target records | ${report.targets.records}: ${report.targets.succeeded} succeeded, ${report.targets.skipped} skipped (${Object.entries(
      report.targets.skipReasons,
    )
      .sort((x, y) => y[1] - x[1])
      .map(([reason, n]) => `${reason} ${n}`)
      .join(
        ', ',
      )}), ${report.targets.failed} failed (${report.targets.reversed} paused again by the other job while the resume waited) |`,
    `| pause and resume runs executing at once | ${report.targets.overlappingRuns} |`,
    `| run pairs of one job started out of tick order | ${report.targets.outOfTickOrder} |`,
    `| desired state at the end | ${report.desiredState.percent} % ${report.desiredState.expected} (${report.desiredState.inState} / ${report.desiredState.total}) after the last ${t.lastAction} |`,
    `| retries spent | ${report.retries.targetRetries + report.retries.redeliveries}: ${report.retries.targetRetries} target retries + ${report.retries.redeliveries} redeliveries (${report.retries.runsRedelivered} runs) |`,
    `| API calls | ${a.calls}: ${a.injected.error} answered 500, ${a.injected.hang} hung, ${a.injected.throttle} throttled (429) |`,
    `| accepted pauses / resumes | ${a.pauses} / ${a.resumes}; ${a.refusedAsAlreadyDone} refused as already done, ${a.doubleMutations} double |`,
    `| worker kills | ${report.kills.length} (${report.kills.filter((k) => k.runs.length > 0).length} mid-run); recovery ${recoverySpread(report.kills)} |`,
  );
  if (report.bullFailed.length) lines.push(`| failed in BullMQ | ${report.bullFailed.join('; ')} |`);
  const errors = Object.entries(report.errorLines);
  if (errors.length) lines.push(`| error lines | ${errors.map(([m, n]) => `${m} ×${n}`).join('; ')} |`);
  lines.push(
    '',
    '| at | event | runs affected | recovered after | replacement ready after |',
    '|---|---|---|---|---|',
  );
  const rows = [
    ...report.kills.map((k) => ({
      at: k.atMs,
      row: `| ${seconds(k.atMs)} | SIGKILL ${k.instance} | ${k.runs.join(', ') || 'none (idle)'} | ${k.runs.length ? seconds(k.recoveryMs) + (k.unrecovered.length ? ` (never: ${k.unrecovered.join(', ')})` : '') : 'idle'} | ${seconds(k.replacementReadyMs)} |`,
    })),
    ...report.restarts.map((r) => ({
      at: r.atMs,
      row:
        r.what === 'redis'
          ? `| ${seconds(r.atMs)} | Redis stopped and started again (appendonly) | ${r.detail || 'none'} | listening again after ${seconds(r.downMs)}${r.reconnectedMs === undefined ? '' : `; every client that noticed back after ${seconds(r.reconnectedMs)}`} | — |`
          : `| ${seconds(r.atMs)} | SIGKILL ${r.detail} | — | — | ${seconds(r.downMs)} |`,
    })),
  ].sort((x, y) => x.at - y.at);
  lines.push(...rows.map((r) => r.row));
  lines.push('', `Times are from the first tick. Process logs: ${report.logDir}`);
  return lines.join('\n');
}

function recoverySpread(kills: readonly KillRecord[]): string {
  const times = kills
    .flatMap((k) => (k.recoveryMs === undefined ? [] : [k.recoveryMs]))
    .sort((a, b) => a - b);
  if (times.length === 0) return '—';
  return `min ${seconds(times[0])}, median ${seconds(times[Math.floor(times.length / 2)])}, max ${seconds(times.at(-1))}`;
}
