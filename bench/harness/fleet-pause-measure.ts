import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { actionRegistry } from '../../jobs/index.js';
import type { ApiClient } from '../../src/api/index.js';
import type { RunSummary } from '../../src/engine/index.js';
import { parsePolicy } from '../../src/policy/index.js';
import { createRunQueue, enqueueRuns, manualRunId } from '../../src/queue/run-queue.js';
import { RunHistory } from '../../src/store/history.js';
import { type RedisKeys, redisKeys } from '../../src/store/keys.js';
import { PolicyStore } from '../../src/store/policy-store.js';
import { API_KEY, fleetSize, type SimChild } from './fleet-pause-sim.js';
import { shardsOf, type Variant, variantPolicy } from './fleet-pause-variant.js';
import { HARNESS_POLICY_KEY, harnessKeyring } from './policy-key.js';

/** bench/fleet-baseline-worker.ts listens on this queue. */
const BASELINE_QUEUE = 'fleet-baseline';
const RUN_TIMEOUT_MS = 15 * 60_000;

/** What every variant is measured on: set up once, shared by all of them. */
export interface Rig {
  redisUrl: string;
  redis: Redis;
  sim: SimChild;
  api: ApiClient;
  /** Node's arguments to start one nightshift worker. */
  workerScript: string[];
  /** Node's arguments to start one baseline worker. */
  baselineScript: string[];
  concurrency: number;
  repeat: number;
  /** `--per-worker`: the one job's concurrency with `--one-run`. */
  perWorker: number;
  /** `--part-size`, as NIGHTSHIFT_RUN_PART_SIZE. */
  partSize: string;
}

export interface Measured {
  wallMs: number[];
  workersCpu: number;
  /** The workers' CPU seconds in each run. */
  workersCpuRuns: number[];
  simCpu: number;
  redisCpu: number;
  problems: string[];
}

/** One variant's workers, queues and stored policy, for its `repeat` runs. */
interface Trial {
  rig: Rig;
  variant: Variant;
  workers: ChildProcess[];
  runQueue: ReturnType<typeof createRunQueue>;
  baselineQueue: Queue;
  history: RunHistory;
  keys: RedisKeys;
  shards: string[][];
  perShard: number;
  jobs: string[];
  policySha: string;
}

/** What one run of a variant did, before its CPU is counted and its pauses checked in the simulator. */
interface RunOutcome {
  wallMs: number;
  paused: number;
  problems: string[];
}

let workerLogs = 0;
let variantIndex = 0;

/** Where a worker's stdout (its log lines) goes: a file of its own in BENCH_WORKER_LOG_DIR, or nowhere. */
function workerLog(prefix: string): 'ignore' | number {
  const dir = process.env.BENCH_WORKER_LOG_DIR;
  if (!dir) return 'ignore';
  mkdirSync(dir, { recursive: true });
  return openSync(`${dir}/${prefix}-worker${workerLogs++}.log`, 'w');
}

/** CPU seconds a process has used (Linux: utime + stime from /proc, 100 ticks a second). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const read = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1]);
  return read('used_cpu_sys') + read('used_cpu_user');
}

/** Back to an all-Active fleet, with the simulator's list cache warm (every run starts the same). */
export async function resetFleet(rig: Rig): Promise<void> {
  await rig.sim.ask({ op: 'reset' });
  await rig.api.listWorkgroups();
}

/** The environment of a variant's workers, on a Redis prefix of its own. */
function workerEnv(rig: Rig, variant: Variant, prefix: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: rig.redisUrl };
  delete env.NIGHTSHIFT_API_RATE_LIMIT;
  if (variant.kind === 'nightshift') {
    Object.assign(env, {
      NIGHTSHIFT_REDIS_PREFIX: prefix,
      NIGHTSHIFT_API_URL: rig.sim.url,
      NIGHTSHIFT_API_KEY: API_KEY,
      NIGHTSHIFT_POLICY_KEY: HARNESS_POLICY_KEY,
      NIGHTSHIFT_WORKER_CONCURRENCY: '1',
      NIGHTSHIFT_LOG_FORMAT: 'json',
      NIGHTSHIFT_LOG_LEVEL: variant.logLevel ?? 'info',
      NIGHTSHIFT_SHUTDOWN_GRACE_MS: '5000',
      NIGHTSHIFT_HTTP_PORT: '0', // each worker's ops server (/metrics) on a free port, as deployed
      NIGHTSHIFT_RUN_PART_SIZE: rig.partSize,
    });
    if (variant.rate) env.NIGHTSHIFT_API_RATE_LIMIT = String(variant.rate);
  } else {
    Object.assign(env, { BENCH_PREFIX: prefix, API_URL: rig.sim.url, API_KEY });
  }
  return env;
}

async function waitForWorkers(
  queue: Pick<Queue, 'getWorkersCount'>,
  workers: ChildProcess[],
  variant: Variant,
): Promise<void> {
  const ready = Date.now() + 60_000;
  while ((await queue.getWorkersCount()) < variant.workers) {
    const exited = workers.find((worker) => worker.exitCode !== null);
    if (exited) throw new Error(`${variant.label}: a worker exited with code ${exited.exitCode} at start`);
    if (Date.now() > ready) throw new Error(`${variant.label}: workers not ready after 60 s`);
    await sleep(50);
  }
}

async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  for (const worker of workers) worker.kill('SIGTERM');
  await Promise.all(workers.map((worker) => (worker.exitCode === null ? once(worker, 'exit') : undefined)));
}

/** Runs that did not succeed, and K runs that went one after another rather than to K workers at once. */
function summaryProblems(summaries: RunSummary[]): string[] {
  const problems: string[] = [];
  for (const summary of summaries) {
    if (summary.outcome !== 'succeeded')
      problems.push(`${summary.runId}: ${summary.outcome} ${summary.reason ?? ''}`);
  }
  const lastStart = Math.max(...summaries.map((s) => Date.parse(s.startedAt ?? '')));
  const firstEnd = Math.min(...summaries.map((s) => Date.parse(s.finishedAt ?? '')));
  if (summaries.length > 1 && lastStart >= firstEnd) problems.push('the runs did not overlap');
  return problems;
}

/** Enqueues the variant's runs and times them until each has its summary in the history. */
async function runNightshiftJobs(trial: Trial): Promise<RunOutcome> {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  const started = performance.now();
  const runs = trial.jobs.map((job) => ({
    runId: manualRunId(job),
    job,
    policySha: trial.policySha,
    trigger: 'manual' as const,
    dryRun: false,
  }));
  await enqueueRuns(trial.runQueue, runs);
  const pending = new Set(runs.map((run) => run.runId));
  while (pending.size > 0) {
    for (const runId of [...pending])
      if (await trial.rig.redis.exists(trial.keys.run(runId))) pending.delete(runId);
    if (pending.size > 0) await sleep(10);
    if (Date.now() > deadline) throw new Error(`${trial.variant.label}: runs not finished in time`);
  }
  const wallMs = performance.now() - started;
  const summaries = (await Promise.all(runs.map((run) => trial.history.get(run.runId)))) as RunSummary[];
  return {
    wallMs,
    paused: summaries.reduce((sum, summary) => sum + summary.counts.succeeded, 0),
    problems: summaryProblems(summaries),
  };
}

/** Adds one baseline job a shard and times them until all of run `r`'s are done. */
async function runBaselineJobs(trial: Trial, r: number): Promise<RunOutcome> {
  const { baselineQueue, shards } = trial;
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  const started = performance.now();
  await baselineQueue.addBulk(
    shards.map((prefixes) => ({ name: 'pause', data: { prefixes, concurrency: trial.perShard } })),
  );
  for (;;) {
    const counts = await baselineQueue.getJobCounts('completed', 'failed');
    if ((counts.completed ?? 0) + (counts.failed ?? 0) >= shards.length * (r + 1)) break;
    await sleep(10);
    if (Date.now() > deadline) throw new Error(`${trial.variant.label}: jobs not finished in time`);
  }
  const wallMs = performance.now() - started;
  const done = await baselineQueue.getJobs(['completed'], 0, shards.length - 1);
  const problems = done.length < shards.length ? [`${shards.length - done.length} jobs failed`] : [];
  return {
    wallMs,
    paused: done.reduce((sum, job) => sum + (job.returnvalue as { paused: number }).paused, 0),
    problems,
  };
}

/** Run `r` of a variant from a fresh fleet, with the CPU each process used in it. */
async function measureRun(trial: Trial, r: number) {
  const { rig, variant, workers, keys } = trial;
  await resetFleet(rig);
  // every run starts with an empty ledger too: the last run's 10,000 records left there would
  // make each pause first end a pause someone undid (a workspace found Active again), which is
  // another case than a night's pause after the morning's resume
  await rig.redis.del(keys.owned, keys.pauseJournal, keys.pausedIntervals, keys.savingsTotals);
  if (variant.rate) await rig.redis.del(keys.rateLimit('api')); // each run starts with a full bucket
  const cpuBefore = workers.map((worker) => cpuSeconds(worker.pid));
  const simBefore = cpuSeconds(rig.sim.child.pid);
  const redisBefore = await redisCpuSeconds(rig.redis);
  const outcome =
    variant.kind === 'nightshift' ? await runNightshiftJobs(trial) : await runBaselineJobs(trial, r);
  const workersCpu = workers.reduce(
    (sum, worker, i) => sum + cpuSeconds(worker.pid) - (cpuBefore[i] ?? 0),
    0,
  );
  const simCpu = cpuSeconds(rig.sim.child.pid) - simBefore;
  const redisCpu = (await redisCpuSeconds(rig.redis)) - redisBefore;
  const n = fleetSize(variant.fleet);
  const inSim = (await rig.sim.ask({ op: 'paused' })).paused;
  const problems = [...outcome.problems];
  if (outcome.paused !== n || inSim !== n)
    problems.push(
      `run ${r + 1}: paused ${outcome.paused} by the summaries, ${inSim} in the simulator, expected ${n}`,
    );
  return { wallMs: outcome.wallMs, workersCpu, simCpu, redisCpu, problems };
}

/** The variant's `repeat` runs: every wall time, and the CPU per run on average. */
async function measureRuns(trial: Trial): Promise<Measured> {
  const { repeat } = trial.rig;
  const total: Measured = {
    wallMs: [],
    workersCpu: 0,
    workersCpuRuns: [],
    simCpu: 0,
    redisCpu: 0,
    problems: [],
  };
  for (let r = 0; r < repeat; r++) {
    const run = await measureRun(trial, r);
    total.wallMs.push(run.wallMs);
    total.problems.push(...run.problems);
    total.workersCpuRuns.push(run.workersCpu);
    total.workersCpu += run.workersCpu;
    total.simCpu += run.simCpu;
    total.redisCpu += run.redisCpu;
  }
  return {
    ...total,
    workersCpu: total.workersCpu / repeat,
    simCpu: total.simCpu / repeat,
    redisCpu: total.redisCpu / repeat,
  };
}

/** Starts the variant's workers on a Redis prefix of its own, runs it `repeat` times, and stops them. */
export async function measure(rig: Rig, variant: Variant): Promise<Measured> {
  const prefix = `fp${variantIndex++}`;
  const shards = variant.oneRun ? shardsOf(1) : shardsOf(variant.workers);
  const perShard = variant.oneRun ? rig.perWorker : rig.concurrency / variant.workers;
  const env = workerEnv(rig, variant, prefix);
  const isNightshift = variant.kind === 'nightshift';
  const script = isNightshift ? rig.workerScript : rig.baselineScript;
  const workers = Array.from({ length: variant.workers }, () =>
    spawn(process.execPath, script, { env, stdio: ['ignore', workerLog(prefix), 'inherit'] }),
  );
  const runQueue = createRunQueue({ connection: rig.redis, prefix });
  const baselineQueue = new Queue(BASELINE_QUEUE, { connection: rig.redis, prefix });
  const history = new RunHistory(rig.redis, { prefix });
  const keys = redisKeys(prefix);
  try {
    await waitForWorkers(isNightshift ? runQueue : baselineQueue, workers, variant);
    const { text, jobs } = variantPolicy(variant, shards, perShard);
    parsePolicy(text, 'fleet-pause.yaml', { registry: actionRegistry, env: {} });
    const policySha = await new PolicyStore(rig.redis, { prefix, keyring: harnessKeyring() }).put(text);
    return await measureRuns({
      rig,
      variant,
      workers,
      runQueue,
      baselineQueue,
      history,
      keys,
      shards,
      perShard,
      jobs,
      policySha,
    });
  } finally {
    await stopWorkers(workers);
    await runQueue.close();
    await baselineQueue.close();
  }
}
