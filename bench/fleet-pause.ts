/**
 * Fleet pause: one pause of N Active workspaces (default 1,000 workgroups × 10) against the
 * simulator with a fixed latency L on every call (default 20 ms), C calls in flight in all
 * (default 64), on a private redis-server. The ideal is the list-workgroups call plus N × L / C.
 * Prints, side by side in one run:
 *
 * - a sequential loop over the client (what a shell script does), timed on a sample of
 *   `--sequential-sample` workspaces and extrapolated to N;
 * - the hand-written baseline (bench/fleet-baseline-worker.ts: a BullMQ Worker and an undici Pool);
 * - nightshift: `nightshift worker` processes executing `pause` runs taken off the queue, timed
 *   from the enqueue to the last run summary in the history.
 *
 * Each with 1, 2 and 4 worker processes (`--workers`), plus nightshift with one worker at log
 * level warn (what logging costs). One run executes on one worker, so with K workers the fleet
 * is split into K jobs (workgroups by name, `part00-*` … `part23-*`), each with
 * `concurrency: C/K`, enqueued together; the baseline gets the same K jobs. Then with a
 * shared API rate limit R (NIGHTSHIFT_API_RATE_LIMIT, default 500/s) on a smaller fleet
 * (`--rate-workgroups`, default 200 × 10 = 2,000 workspaces, to keep it short), whose ideal is
 * the list call plus the larger of N × L / C and (N + 1 − B) / R: the limiter's bucket starts
 * full with B = R tokens, and the list call takes one.
 *
 *   npx tsx bench/fleet-pause.ts [--workgroups 1000] [--per-workgroup 10] [--latency-ms 20]
 *     [--concurrency 64] [--workers 1,2,4] [--rate 500] [--rate-workgroups 200]
 *     [--rate-workers 1,4] [--sequential-sample 500] [--repeat 3] [--dist]
 *
 * With `--one-run`, ONE job covers the whole fleet and K workers share its one run (split into
 * parts of `--part-size`, NIGHTSHIFT_RUN_PART_SIZE): the job's `concurrency` is
 * `--per-worker` (default 16) and every worker runs one run or part at a time
 * (NIGHTSHIFT_WORKER_CONCURRENCY=1), so each worker has at most that many calls in flight; the
 * ideal is the list call plus N × L / (per-worker × K). E.g. the figures in docs/benchmarks.md:
 *
 *   npx tsx bench/fleet-pause.ts --one-run --latency-ms 100 --workgroups 1000 --per-workgroup 10 --repeat 1
 *
 * and, with the API rate limit `--rate` shared by the K workers of `--rate-workers` (the same
 * fleet), e.g. `--one-run --workers 4 --rate-workers 4` adds the row at 500 req/s. With
 * `--window` too, the one run is a window's off edge over the whole fleet (a window whose uptime
 * is an hour three hours from now, UTC) instead of a `pause` run: its pauses are shared out in
 * parts the same way.
 *
 * `--skip-warn` leaves out the row at log level warn. `--figures FILE` also writes every row as JSON (bench/smoke.ts reads it and checks its bounds).
 * A smoke run: `npm run bench:smoke`.
 *
 * The simulator runs in a child process (its CPU is not the workers'); every workspace starts
 * Active and the fleet is reset between runs. Workers run the CLI's `worker` command from the
 * sources through tsx, or `bin/nightshift.js worker` with `--dist` (run `npm run build` first).
 * CPU columns: seconds of CPU the worker processes, the simulator and redis-server used during
 * the run (Linux /proc; "-" elsewhere). BENCH_WORKER_NODE_ARGS adds node flags to every worker,
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them. BENCH_WORKER_LOG_DIR keeps each
 * worker's log lines in a file there (e.g. to see when each call of a run went), instead of
 * dropping them; writing them costs the workers CPU.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { actionRegistry } from '../jobs/index.js';
import { ApiClient } from '../src/api/index.js';
import type { RunSummary } from '../src/engine/index.js';
import { parsePolicy } from '../src/policy/index.js';
import { createRunQueue, enqueueRuns, manualRunId } from '../src/queue/run-queue.js';
import { parseFleet, seedState, startSimulator } from '../src/sim/index.js';
import { RunHistory } from '../src/store/history.js';
import { redisKeys } from '../src/store/keys.js';
import { startLocalRedis } from '../src/store/local-server.js';
import { PolicyStore } from '../src/store/policy-store.js';
import { createRedis } from '../src/store/redis.js';
import { HARNESS_POLICY_KEY, harnessKeyring } from './harness/policy-key.js';

const API_KEY = 'bench-key';
/** Workgroups are named `partNN-<seeded name>` with NN = index mod PARTS, so K shards (K dividing PARTS) are K sets of globs. */
const PARTS = 24;
/** bench/fleet-baseline-worker.ts listens on this queue. */
const BASELINE_QUEUE = 'fleet-baseline';
const RUN_TIMEOUT_MS = 15 * 60_000;

const { values } = parseArgs({
  options: {
    serve: { type: 'boolean', default: false },
    'nightshift-worker': { type: 'boolean', default: false },
    workgroups: { type: 'string', default: '1000' },
    'per-workgroup': { type: 'string', default: '10' },
    'latency-ms': { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '64' },
    workers: { type: 'string', default: '1,2,4' },
    rate: { type: 'string', default: '500' },
    'rate-workgroups': { type: 'string', default: '200' },
    'rate-workers': { type: 'string', default: '1,4' },
    'sequential-sample': { type: 'string', default: '500' },
    repeat: { type: 'string', default: '3' },
    dist: { type: 'boolean', default: false },
    'one-run': { type: 'boolean', default: false },
    'per-worker': { type: 'string', default: '16' },
    'part-size': { type: 'string', default: '500' },
    window: { type: 'boolean', default: false },
    'skip-warn': { type: 'boolean', default: false },
    figures: { type: 'string' },
  },
});

interface FleetSize {
  workgroups: number;
  perWorkgroup: number;
}

type SimRequest = { op: 'fleet'; fleet: FleetSize } | { op: 'reset' } | { op: 'paused' };
interface SimReply {
  url?: string;
  workspaces?: number;
  paused?: number;
}

const part = (index: number) => `part${String(index % PARTS).padStart(2, '0')}`;

/** The seeded fleet with every workspace Active and workgroups named by part. */
function allActiveState({ workgroups, perWorkgroup }: FleetSize) {
  const state = seedState({ seed: 1, fleet: parseFleet(`${workgroups}x${perWorkgroup}`) });
  for (const [index, workgroup] of state.workgroups.entries())
    workgroup.name = `${part(index)}-${workgroup.name}`;
  for (const workspace of state.workspaces) {
    Object.assign(workspace, { status: 'Active', display_status: 'Running', condition_type: 'Ready' });
  }
  state.transitions = [];
  return state;
}

/** The simulator child: answers `fleet` (new all-Active fleet), `reset` (back to it) and `paused` over IPC. */
async function serve(): Promise<void> {
  const sim = await startSimulator({
    apiKey: API_KEY,
    state: allActiveState({ workgroups: 1, perWorkgroup: 1 }),
    faults: { latencyMs: Number(values['latency-ms']) },
    // no transition completes during a run: the fleet only changes by the benchmark's calls
    transitionMs: 3_600_000,
  });
  process.on('message', (request: SimRequest) => {
    let reply: SimReply = {};
    if (request.op === 'fleet') {
      sim.reset({ state: allActiveState(request.fleet) });
      reply = { workspaces: sim.state.workspaces.length };
    } else if (request.op === 'reset') {
      sim.reset();
      reply = { workspaces: sim.state.workspaces.length };
    } else {
      reply = { paused: sim.state.workspaces.filter((ws) => ws.status !== 'Active').length };
    }
    process.send?.(reply);
  });
  process.once('SIGTERM', () => void sim.close().then(() => process.exit(0)));
  process.send?.({ url: sim.url } satisfies SimReply);
}

/** The CLI's `nightshift worker`, from the sources. */
async function nightshiftWorker(): Promise<void> {
  const { main } = await import('../src/cli/main.js');
  process.exitCode = await main([process.argv[0] as string, 'nightshift', 'worker']);
}

class SimChild {
  constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(): Promise<SimChild> {
    const child = fork(fileURLToPath(import.meta.url), ['--serve', '--latency-ms', values['latency-ms']], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const [reply] = (await once(child, 'message')) as [SimReply];
    return new SimChild(child, reply.url as string);
  }

  async ask(request: SimRequest): Promise<SimReply> {
    const reply = once(this.child, 'message') as Promise<[SimReply]>;
    this.child.send(request);
    return (await reply)[0];
  }
}

let workerLogs = 0;

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

const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)] ?? 0;
const numbers = (text: string) =>
  text
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const count = (n: number) => n.toLocaleString('en-US');

interface Variant {
  label: string;
  kind: 'nightshift' | 'baseline';
  workers: number;
  fleet: FleetSize;
  rate?: number;
  logLevel?: string;
  /** One job over the whole fleet, its one run shared by the workers (`--one-run`). */
  oneRun?: boolean;
  /** With `oneRun`: the run is a window's off edge over the fleet (`--window`), not a `pause` run. */
  window?: boolean;
}

/** One row of the table, as `--figures` writes it for bench/smoke.ts. */
interface FigureRow {
  label: string;
  kind: Variant['kind'];
  workers: number;
  oneRun: boolean;
  window: boolean;
  rate: number | null;
  logLevel: string | null;
  targets: number;
  wallS: number;
  runsS: number[];
  idealS: number;
  /** Wall time over the baseline's with as many workers (plain nightshift rows only). */
  vsBaseline: number | null;
  /** One-run rows: wall time over the one-worker row's. */
  vsOneWorker: number | null;
  workersCpuS: number;
  cpuMsPerTarget: number;
  /** The workers' CPU a target in each run, in ms (the mean is `cpuMsPerTarget`). */
  cpuMsPerTargetRuns: number[];
  problems: string[];
}

/** An hour of uptime three hours from now (UTC): the window is off whenever the benchmark runs. */
function offWindowUptime(): string {
  const hour = (new Date().getUTCHours() + 3) % 24;
  const end = hour === 23 ? '24' : String(hour + 1).padStart(2, '0');
  return `Mon-Sun ${String(hour).padStart(2, '0')}:00-${end}:00`;
}

/** The policy of a variant: K pause jobs (one per shard), or one window over the fleet. */
function variantPolicy(
  variant: Variant,
  shards: string[][],
  perShard: number,
): { text: string; jobs: string[] } {
  if (variant.window)
    return {
      jobs: ['edge'],
      text: [
        'version: 1',
        'windows:',
        '  edge:',
        '    target: { workgroups: ["*"] }',
        `    uptime: "${offWindowUptime()}"`,
        '    timezone: UTC',
        `    concurrency: ${perShard}`,
        '    timeout: 30m',
      ].join('\n'),
    };
  return {
    jobs: shards.map((_, k) => `pause-${k}`),
    text: [
      'version: 1',
      'jobs:',
      ...shards.flatMap((prefixes, k) => [
        `  pause-${k}:`,
        '    schedule: "0 20 * * 1-5"',
        '    action: pause',
        `    target: { workgroups: [${prefixes.map((p) => `"${p}*"`).join(', ')}] }`,
        `    concurrency: ${perShard}`,
      ]),
    ].join('\n'),
  };
}

interface Measured {
  wallMs: number[];
  workersCpu: number;
  /** The workers' CPU seconds in each run. */
  workersCpuRuns: number[];
  simCpu: number;
  redisCpu: number;
  problems: string[];
}

async function bench(): Promise<void> {
  const mainFleet: FleetSize = {
    workgroups: Number(values.workgroups),
    perWorkgroup: Number(values['per-workgroup']),
  };
  const rateFleet: FleetSize = { ...mainFleet, workgroups: Number(values['rate-workgroups']) };
  const latencyMs = Number(values['latency-ms']);
  const concurrency = Number(values.concurrency);
  const rate = Number(values.rate);
  const repeat = Number(values.repeat);
  const sample = Number(values['sequential-sample']);
  const size = (fleet: FleetSize) => fleet.workgroups * fleet.perWorkgroup;
  const workerCounts = numbers(values.workers);
  for (const k of [...workerCounts, ...numbers(values['rate-workers'])]) {
    if (PARTS % k !== 0 || concurrency % k !== 0)
      throw new Error(
        `--workers ${k}: must divide ${PARTS} (parts of the fleet) and --concurrency ${concurrency}`,
      );
  }

  const cpu = cpus();
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  process.stdout.write(
    `fleet pause (node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, load average ${load})\n` +
      `  simulator in a child process, ${latencyMs} ms latency on every call, C = ${concurrency} calls in flight in all, ` +
      `private redis-server, median of ${repeat} run${repeat === 1 ? '' : 's'} per variant\n`,
  );

  const redisServer = await startLocalRedis({ appendOnly: false });
  const redis = createRedis({ url: redisServer.url, role: 'bench' });
  const sim = await SimChild.start();
  const api = new ApiClient({ baseUrl: sim.url, apiKey: API_KEY });
  // e.g. BENCH_WORKER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile the workers
  const nodeArgs = process.env.BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const workerScript = values.dist
    ? [...nodeArgs, fileURLToPath(new URL('../bin/nightshift.js', import.meta.url)), 'worker']
    : [...nodeArgs, ...process.execArgv, fileURLToPath(import.meta.url), '--nightshift-worker'];
  const baselineScript = [
    ...nodeArgs,
    ...process.execArgv,
    fileURLToPath(new URL('fleet-baseline-worker.ts', import.meta.url)),
  ];
  let variantIndex = 0;

  /** Back to an all-Active fleet, with the simulator's list cache warm (every run starts the same). */
  const reset = async () => {
    await sim.ask({ op: 'reset' });
    await api.listWorkgroups();
  };
  const listMs = async () => {
    await reset();
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      await api.listWorkgroups();
      times.push(performance.now() - started);
    }
    return median(times);
  };

  const shardsOf = (workers: number) =>
    Array.from({ length: workers }, (_, k) =>
      Array.from({ length: PARTS / workers }, (_, i) => `part${String(k + i * workers).padStart(2, '0')}-`),
    );

  async function measure(variant: Variant): Promise<Measured> {
    const prefix = `fp${variantIndex++}`;
    const n = size(variant.fleet);
    const shards = variant.oneRun ? shardsOf(1) : shardsOf(variant.workers);
    const perShard = variant.oneRun ? Number(values['per-worker']) : concurrency / variant.workers;
    const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redisServer.url };
    delete env.NIGHTSHIFT_API_RATE_LIMIT;
    const isNightshift = variant.kind === 'nightshift';
    if (isNightshift) {
      Object.assign(env, {
        NIGHTSHIFT_REDIS_PREFIX: prefix,
        NIGHTSHIFT_API_URL: sim.url,
        NIGHTSHIFT_API_KEY: API_KEY,
        NIGHTSHIFT_POLICY_KEY: HARNESS_POLICY_KEY,
        NIGHTSHIFT_WORKER_CONCURRENCY: '1',
        NIGHTSHIFT_LOG_FORMAT: 'json',
        NIGHTSHIFT_LOG_LEVEL: variant.logLevel ?? 'info',
        NIGHTSHIFT_SHUTDOWN_GRACE_MS: '5000',
        NIGHTSHIFT_HTTP_PORT: '0', // each worker's ops server (/metrics) on a free port, as deployed
        NIGHTSHIFT_RUN_PART_SIZE: values['part-size'],
      });
      if (variant.rate) env.NIGHTSHIFT_API_RATE_LIMIT = String(variant.rate);
    } else {
      Object.assign(env, { BENCH_PREFIX: prefix, API_URL: sim.url, API_KEY });
    }
    const script = isNightshift ? workerScript : baselineScript;
    const workers = Array.from({ length: variant.workers }, () =>
      spawn(process.execPath, script, { env, stdio: ['ignore', workerLog(prefix), 'inherit'] }),
    );
    const runQueue = createRunQueue({ connection: redis, prefix });
    const baselineQueue = new Queue(BASELINE_QUEUE, { connection: redis, prefix });
    const queue = isNightshift ? runQueue : baselineQueue;
    const history = new RunHistory(redis, { prefix });
    const keys = redisKeys(prefix);
    const problems: string[] = [];
    const wallMs: number[] = [];
    let workersCpu = 0;
    const workersCpuRuns: number[] = [];
    let simCpu = 0;
    let redisCpu = 0;
    try {
      const ready = Date.now() + 60_000;
      while ((await queue.getWorkersCount()) < variant.workers) {
        const exited = workers.find((worker) => worker.exitCode !== null);
        if (exited)
          throw new Error(`${variant.label}: a worker exited with code ${exited.exitCode} at start`);
        if (Date.now() > ready) throw new Error(`${variant.label}: workers not ready after 60 s`);
        await sleep(50);
      }
      const { text, jobs } = variantPolicy(variant, shards, perShard);
      parsePolicy(text, 'fleet-pause.yaml', { registry: actionRegistry, env: {} });
      const policySha = await new PolicyStore(redis, { prefix, keyring: harnessKeyring() }).put(text);

      for (let r = 0; r < repeat; r++) {
        await reset();
        // every run starts with an empty ledger too: the last run's 10,000 records left there would
        // make each pause first end a pause someone undid (a workspace found Active again), which is
        // another case than a night's pause after the morning's resume
        await redis.del(keys.owned, keys.pauseJournal, keys.pausedIntervals, keys.savingsTotals);
        if (variant.rate) await redis.del(keys.rateLimit('api')); // each run starts with a full bucket
        const cpuBefore = workers.map((worker) => cpuSeconds(worker.pid));
        const simBefore = cpuSeconds(sim.child.pid);
        const redisBefore = await redisCpuSeconds(redis);
        let paused = 0;
        const deadline = Date.now() + RUN_TIMEOUT_MS;
        const started = performance.now();
        if (isNightshift) {
          const runs = jobs.map((job) => ({
            runId: manualRunId(job),
            job,
            policySha,
            trigger: 'manual' as const,
            dryRun: false,
          }));
          await enqueueRuns(runQueue, runs);
          const pending = new Set(runs.map((run) => run.runId));
          while (pending.size > 0) {
            for (const runId of [...pending]) if (await redis.exists(keys.run(runId))) pending.delete(runId);
            if (pending.size > 0) await sleep(10);
            if (Date.now() > deadline) throw new Error(`${variant.label}: runs not finished in time`);
          }
          wallMs.push(performance.now() - started);
          const summaries = (await Promise.all(runs.map((run) => history.get(run.runId)))) as RunSummary[];
          paused = summaries.reduce((sum, summary) => sum + summary.counts.succeeded, 0);
          for (const summary of summaries) {
            if (summary.outcome !== 'succeeded')
              problems.push(`${summary.runId}: ${summary.outcome} ${summary.reason ?? ''}`);
          }
          // proof that the K runs went to K workers at once rather than one after another
          const lastStart = Math.max(...summaries.map((s) => Date.parse(s.startedAt ?? '')));
          const firstEnd = Math.min(...summaries.map((s) => Date.parse(s.finishedAt ?? '')));
          if (summaries.length > 1 && lastStart >= firstEnd) problems.push('the runs did not overlap');
        } else {
          await baselineQueue.addBulk(
            shards.map((prefixes) => ({ name: 'pause', data: { prefixes, concurrency: perShard } })),
          );
          for (;;) {
            const counts = await baselineQueue.getJobCounts('completed', 'failed');
            if ((counts.completed ?? 0) + (counts.failed ?? 0) >= shards.length * (r + 1)) break;
            await sleep(10);
            if (Date.now() > deadline) throw new Error(`${variant.label}: jobs not finished in time`);
          }
          wallMs.push(performance.now() - started);
          const done = await baselineQueue.getJobs(['completed'], 0, shards.length - 1);
          paused = done.reduce((sum, job) => sum + (job.returnvalue as { paused: number }).paused, 0);
          if (done.length < shards.length) problems.push(`${shards.length - done.length} jobs failed`);
        }
        const runCpu = workers.reduce(
          (sum, worker, i) => sum + cpuSeconds(worker.pid) - (cpuBefore[i] ?? 0),
          0,
        );
        workersCpuRuns.push(runCpu);
        workersCpu += runCpu;
        simCpu += cpuSeconds(sim.child.pid) - simBefore;
        redisCpu += (await redisCpuSeconds(redis)) - redisBefore;
        const inSim = (await sim.ask({ op: 'paused' })).paused;
        if (paused !== n || inSim !== n)
          problems.push(
            `run ${r + 1}: paused ${paused} by the summaries, ${inSim} in the simulator, expected ${n}`,
          );
      }
    } finally {
      for (const worker of workers) worker.kill('SIGTERM');
      await Promise.all(
        workers.map((worker) => (worker.exitCode === null ? once(worker, 'exit') : undefined)),
      );
      await runQueue.close();
      await baselineQueue.close();
    }
    return {
      wallMs,
      workersCpu: workersCpu / repeat,
      workersCpuRuns,
      simCpu: simCpu / repeat,
      redisCpu: redisCpu / repeat,
      problems,
    };
  }

  const header = `  ${'variant'.padEnd(42)} ${'N'.padStart(7)}   wall s  ideal s  ratio  vs base   CPU s: workers    sim  redis`;
  const baselines = new Map<string, number>();
  const figures: FigureRow[] = [];
  let failed = false;
  const writeFigures = () => {
    if (values.figures)
      writeFileSync(values.figures, `${JSON.stringify({ load: loadavg(), rows: figures }, null, 2)}\n`);
  };
  const row = (
    label: string,
    n: number,
    wallS: number,
    idealS: number,
    extra: Partial<Measured> & { base?: number },
  ) => {
    process.stdout.write(
      `${[
        `  ${label.padEnd(42)}`,
        count(n).padStart(7),
        fmt(wallS).padStart(8),
        fmt(idealS).padStart(8),
        `${fmt(wallS / idealS)}×`.padStart(7),
        (extra.base ? `${fmt(wallS / extra.base)}×` : '').padStart(8),
        fmt(extra.workersCpu ?? Number.NaN).padStart(17),
        fmt(extra.simCpu ?? Number.NaN).padStart(6),
        fmt(extra.redisCpu ?? Number.NaN).padStart(6),
      ].join(' ')}\n`,
    );
  };
  const run = async (variant: Variant, idealS: number) => {
    const result = await measure(variant);
    const wallS = median(result.wallMs) / 1000;
    const key = `${variant.workers}`;
    if (variant.kind === 'baseline') baselines.set(key, wallS);
    const base =
      variant.kind === 'nightshift' && !variant.rate && !variant.logLevel ? baselines.get(key) : undefined;
    row(variant.label, size(variant.fleet), wallS, idealS, { ...result, base });
    figures.push({
      label: variant.label,
      kind: variant.kind,
      workers: variant.workers,
      oneRun: variant.oneRun ?? false,
      window: variant.window ?? false,
      rate: variant.rate ?? null,
      logLevel: variant.logLevel ?? null,
      targets: size(variant.fleet),
      wallS,
      runsS: result.wallMs.map((ms) => ms / 1000),
      idealS,
      vsBaseline: base ? wallS / base : null,
      vsOneWorker: null,
      workersCpuS: result.workersCpu,
      cpuMsPerTarget: (result.workersCpu * 1000) / size(variant.fleet),
      cpuMsPerTargetRuns: result.workersCpuRuns.map((cpu) => (cpu * 1000) / size(variant.fleet)),
      problems: result.problems,
    });
    if (repeat > 1)
      process.stdout.write(
        `${' '.repeat(4)}runs: ${result.wallMs.map((ms) => fmt(ms / 1000)).join(', ')} s\n`,
      );
    for (const problem of result.problems) {
      failed = true;
      process.stdout.write(`    CHECK FAILED: ${problem}\n`);
    }
    return wallS;
  };

  if (values['one-run']) {
    try {
      await oneRun(sim, listMs, run, figures, {
        fleet: mainFleet,
        n: size(mainFleet),
        latencyMs,
        workerCounts,
        header,
      });
    } finally {
      sim.child.kill('SIGTERM');
      await api.close();
      redis.disconnect();
      await redisServer.stop();
    }
    writeFigures();
    process.exitCode = failed ? 1 : 0;
    return;
  }

  try {
    const n = size(mainFleet);
    await sim.ask({ op: 'fleet', fleet: mainFleet });
    const list = (await listMs()) / 1000;
    const ideal = list + (n * latencyMs) / concurrency / 1000;
    process.stdout.write(
      `  ${mainFleet.workgroups}×${mainFleet.perWorkgroup} = ${count(n)} Active workspaces; ideal = list-workgroups ` +
        `(${fmt(list * 1000, 0)} ms measured) + N × L / C (${fmt((n * latencyMs) / concurrency / 1000)} s) = ${fmt(ideal)} s\n`,
    );
    process.stdout.write(`${header}\n`);

    // The sequential loop: list, then one pause after another, as a shell script would.
    await reset();
    const sampleSize = Math.min(sample, n);
    const started = performance.now();
    const { result: fleet } = await api.listWorkgroups();
    const listed = performance.now();
    const targets = fleet.flatMap((wg) =>
      (wg.workspaces ?? []).map((ws) => [wg.workgroup_id, ws.workspace_id]),
    );
    for (const [workgroupId, workspaceId] of targets.slice(0, sampleSize))
      await api.pauseWorkspace(workgroupId as string, workspaceId as string);
    const perPause = (performance.now() - listed) / sampleSize;
    row(
      `sequential loop (${count(sampleSize)} timed, extrapolated)`,
      n,
      (listed - started + n * perPause) / 1000,
      ideal,
      {},
    );

    for (const workers of workerCounts) {
      const plural = workers === 1 ? 'worker' : 'workers';
      await run(
        {
          label: `BullMQ + undici baseline, ${workers} ${plural}`,
          kind: 'baseline',
          workers,
          fleet: mainFleet,
        },
        ideal,
      );
      await run(
        { label: `nightshift, ${workers} ${plural}`, kind: 'nightshift', workers, fleet: mainFleet },
        ideal,
      );
    }
    if (!values['skip-warn'])
      await run(
        {
          label: 'nightshift, 1 worker, log level warn',
          kind: 'nightshift',
          workers: 1,
          fleet: mainFleet,
          logLevel: 'warn',
        },
        ideal,
      );

    const rateWorkers = numbers(values['rate-workers']);
    if (rateWorkers.length > 0 && rate > 0) {
      const rn = size(rateFleet);
      await sim.ask({ op: 'fleet', fleet: rateFleet });
      const rateList = (await listMs()) / 1000;
      const rateIdeal =
        rateList + Math.max((rn * latencyMs) / concurrency, ((rn + 1 - rate) * 1000) / rate) / 1000;
      process.stdout.write(
        `  rate limit ${rate}/s shared through Redis, ${rateFleet.workgroups}×${rateFleet.perWorkgroup} = ${count(rn)} workspaces; ` +
          `ideal = list (${fmt(rateList * 1000, 0)} ms) + max(N × L / C, (N + 1 − ${rate}) / R) = ${fmt(rateIdeal)} s (N / R = ${fmt(rn / rate)} s)\n`,
      );
      for (const workers of rateWorkers) {
        await run(
          {
            label: `nightshift, ${workers} worker${workers === 1 ? '' : 's'}, ${rate} req/s`,
            kind: 'nightshift',
            workers,
            fleet: rateFleet,
            rate,
          },
          rateIdeal,
        );
      }
    }
    process.stdout.write(
      `  goals: nightshift ≤ 1.15× the ideal, and within 1.2× of the baseline with as many workers; ` +
        `K workers run K jobs of N/K workspaces with concurrency C/K each (one run executes on one worker)\n`,
    );
  } finally {
    sim.child.kill('SIGTERM');
    await api.close();
    redis.disconnect();
    await redisServer.stop();
  }
  writeFigures();
  process.exitCode = failed ? 1 : 0;
}

/** `--one-run`: one job over the whole fleet, its run shared by K workers, against K = 1's wall time. */
async function oneRun(
  sim: SimChild,
  listMs: () => Promise<number>,
  run: (variant: Variant, idealS: number) => Promise<number>,
  figures: FigureRow[],
  setup: { fleet: FleetSize; n: number; latencyMs: number; workerCounts: number[]; header: string },
): Promise<void> {
  const perWorker = Number(values['per-worker']);
  const window = values.window;
  const what = window ? 'a window whose off edge covers' : 'one job over';
  await sim.ask({ op: 'fleet', fleet: setup.fleet });
  const list = (await listMs()) / 1000;
  process.stdout.write(
    `  ${what} ${count(setup.n)} Active workspaces, its run split into parts of ${values['part-size']}; ` +
      `${perWorker} calls in flight per worker; ideal = list-workgroups (${fmt(list * 1000, 0)} ms) + N × L / (${perWorker} × K)\n`,
  );
  process.stdout.write(`${setup.header}\n`);
  let single: number | undefined;
  for (const workers of setup.workerCounts) {
    const ideal = list + (setup.n * setup.latencyMs) / (perWorker * workers) / 1000;
    const wallS = await run(
      {
        label: `nightshift, ${window ? 'window edge' : 'one run'}, ${workers} worker${workers === 1 ? '' : 's'}`,
        kind: 'nightshift',
        workers,
        fleet: setup.fleet,
        oneRun: true,
        window,
      },
      ideal,
    );
    single ??= workers === 1 ? wallS : undefined;
    if (single && workers > 1) {
      process.stdout.write(`    ${fmt(wallS / single)}× the wall time of 1 worker\n`);
      const last = figures.at(-1);
      if (last) last.vsOneWorker = wallS / single;
    }
  }
  const rate = Number(values.rate);
  for (const workers of rate > 0 ? numbers(values['rate-workers']) : []) {
    // the limiter's bucket starts full with R tokens, and the list call takes one
    const ideal =
      list +
      Math.max((setup.n * setup.latencyMs) / (perWorker * workers), ((setup.n + 1 - rate) * 1000) / rate) /
        1000;
    process.stdout.write(
      `  rate limit ${rate}/s shared through Redis; ideal = list + max(N × L / (${perWorker} × K), (N + 1 − R) / R)\n`,
    );
    await run(
      {
        label: `nightshift, ${window ? 'window edge' : 'one run'}, ${workers} worker${workers === 1 ? '' : 's'}, ${rate} req/s`,
        kind: 'nightshift',
        workers,
        fleet: setup.fleet,
        oneRun: true,
        window,
        rate,
      },
      ideal,
    );
  }
  process.stdout.write(
    '  goals: 4 workers at most 0.35× the wall time of 1; at most 1.1× the ideal under the rate limit\n',
  );
}

if (values.serve) await serve();
else if (values['nightshift-worker']) await nightshiftWorker();
else await bench();
