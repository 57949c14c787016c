/**
 * Memory, on a private redis-server:
 *
 * 1. Each role's steady RSS, as an operator runs it: `node bin/nightshift.js scheduler` on a
 *    generated policy of 1, 1,000 and 10,000 jobs (`--jobs`; varied jobs, as in
 *    policy-validate.ts), an idle `worker` and an idle `start` on a one-job policy. All start at
 *    once, each in a process group of its own; VmRSS (and the peak, VmHWM) is read from /proc
 *    `--seconds` after the start (default 90, as issue 22 measured). Checks BOUNDS_MB and that
 *    each role started (a scheduler with every job of its policy). Needs `npm run build`.
 * 2. Redis memory per retained run summary: `used_memory` before and after recording
 *    `--summaries` summaries (default 1,000) through `RunHistory`. The summary is a real one: a
 *    `pause` run over `--targets` workspaces of the simulator (default 10, then 100: a summary
 *    grows with its targets), recorded again under new run ids across 100 jobs.
 * 3. Retention bounds it: 3 × the total limit (10,000, the default) of 10-workspace summaries
 *    recorded across 100 jobs, then 3 × the per-job limit (500) for one job; kept runs, keys and
 *    `used_memory` stop growing, or the benchmark fails.
 *
 * Parts 2 and 3 run on a redis-server of their own while the roles of part 1 sit idle, once each
 * has logged its start (`roles started after … s`): the roles' RSS is read `--seconds` after
 * their start all the same, and their Redis sees nothing of the other parts.
 *
 * Exits 1 when a role is past its bound or did not start, or retention does not hold.
 *
 *   npx tsx bench/memory.ts [--jobs 1,1000,10000] [--seconds 90] [--summaries 1000] [--targets 10,100] [--retention-total 10000]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { actionRegistry, actions } from '../jobs/index.js';
import type { RunSummary } from '../src/engine/index.js';
import { silentLogger } from '../src/log/logger.js';
import { parsePolicy } from '../src/policy/index.js';
import { manualRunId } from '../src/queue/run-queue.js';
import { RunHistory } from '../src/store/history.js';
import { startLocalRedis } from '../src/store/local-server.js';
import { createRedis } from '../src/store/redis.js';
import { generatePolicy } from './harness/generated-policy.js';
import { HARNESS_POLICY_KEY } from './harness/policy-key.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1,1000,10000' },
    seconds: { type: 'string', default: '90' },
    summaries: { type: 'string', default: '1000' },
    targets: { type: 'string', default: '10,100' },
    'retention-total': { type: 'string', default: '10000' },
  },
});

/** A role process to measure: its CLI arguments, the jobs of its policy, and its bound (MB). */
interface RoleRun {
  label: string;
  args: string[];
  /** The log line that says it started, and (schedulers) how many jobs it scheduled. */
  started: string;
  jobs?: number;
  boundMb: number;
}

/**
 * The goals of issue 22 (steady RSS after 90 s, Node 24, 2-core AMD EPYC): a scheduler with 1 job
 * within 100 MB and with up to 10,000 within 150 MB; an idle worker within 110 MB, an idle
 * `start` within 130 MB.
 */
const BOUNDS_MB = { schedulerOneJob: 100, scheduler: 150, worker: 110, start: 130 } as const;

interface RoleMemory {
  run: RoleRun;
  rssMb: number;
  peakMb: number;
  problem: string | undefined;
}

const kB = (status: string, field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);

/**
 * Starts each role as `node bin/nightshift.js <args>` (from dist/, as an operator starts it), all
 * at once, each in a process group of its own on a prefix of its own; reads VmRSS and VmHWM from
 * /proc after `seconds`, then stops each group. A role that did not log `started` (with its job
 * count, for a scheduler) has a problem.
 */
async function measureRoles(
  runs: RoleRun[],
  redisUrl: string,
  seconds: number,
  onStarted: (afterMs: number) => void,
): Promise<RoleMemory[]> {
  const began = Date.now();
  const bin = fileURLToPath(new URL('../bin/nightshift.js', import.meta.url));
  const children = runs.map((run, index) => {
    const child = spawn(process.execPath, [bin, ...run.args], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        REDIS_URL: redisUrl,
        NIGHTSHIFT_REDIS_PREFIX: `mem${index}`,
        NIGHTSHIFT_POLICY_KEY: HARNESS_POLICY_KEY,
        NIGHTSHIFT_HTTP_PORT: '0',
        NIGHTSHIFT_LOG_FORMAT: 'json',
        // no run is due: the worker never calls it
        NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
        NIGHTSHIFT_API_KEY: 'bench',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    let log = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
    });
    return { child, log: () => log, exited: once(child, 'exit') };
  });
  /** The role's line that says it started, among the whole lines it has logged so far. */
  const startedLine = (run: RoleRun, log: string) =>
    log
      .split('\n')
      .slice(0, -1)
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; jobs?: unknown[] })
      .find((line) => line.msg === run.started);
  try {
    const deadline = began + seconds * 1000;
    const settled = () =>
      children.every(
        ({ child, log }, index) =>
          child.exitCode !== null ||
          child.signalCode !== null ||
          startedLine(runs[index] as RoleRun, log()) !== undefined,
      );
    while (Date.now() < deadline && !settled()) await sleep(100);
    onStarted(Date.now() - began);
    await sleep(Math.max(0, deadline - Date.now()));
    return runs.map((run, index) => {
      const { child, log } = children[index] as (typeof children)[number];
      if (child.exitCode !== null || child.signalCode !== null)
        return {
          run,
          rssMb: Number.NaN,
          peakMb: Number.NaN,
          problem: `exited (${child.exitCode ?? child.signalCode})`,
        };
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const started = startedLine(run, log());
      const problem = !started
        ? `did not log "${run.started}"`
        : run.jobs !== undefined && started.jobs?.length !== run.jobs
          ? `scheduled ${started.jobs?.length} jobs, not ${run.jobs}`
          : undefined;
      return { run, rssMb: kB(status, 'VmRSS') / 1024, peakMb: kB(status, 'VmHWM') / 1024, problem };
    });
  } finally {
    for (const { child } of children) {
      if (child.exitCode === null && child.signalCode === null)
        process.kill(-(child.pid as number), 'SIGTERM');
    }
    await Promise.all(children.map(({ exited }) => exited));
  }
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

/** A real summary: the pause action over `targets` workspaces of the simulator (some Active, some not). */
async function realSummary(targets: number): Promise<RunSummary> {
  // imported here, so the scheduler children load no more than a scheduler does
  const { ApiClient } = await import('../src/api/index.js');
  const { executeRun, MemoryCheckpointStore, nodeActionIo, recordApiCall } = await import(
    '../src/engine/index.js'
  );
  const { startSimulator } = await import('../src/sim/index.js');
  const sim = await startSimulator({
    apiKey: 'k',
    fleet: { workgroups: 1, workspacesPerWorkgroup: targets },
  });
  const api = new ApiClient({ baseUrl: sim.url, apiKey: 'k', onCall: recordApiCall(silentLogger) });
  const text =
    'version: 1\njobs:\n  nightly-pause:\n    schedule: "0 20 * * 1-5"\n    action: pause\n    target: { workgroups: ["*"] }\n';
  const policy = parsePolicy(text, 'memory.yaml', { registry: actionRegistry, env: {} });
  try {
    return await executeRun(
      {
        api,
        io: nodeActionIo({ environment: process.env }),
        actions,
        checkpoints: new MemoryCheckpointStore(),
        log: silentLogger,
        signal: new AbortController().signal,
        pollIntervalMs: 5_000,
      },
      {
        runId: manualRunId('nightly-pause'),
        job: policy.jobs[0] as never,
        trigger: 'schedule',
        dryRun: false,
      },
    );
  } finally {
    await api.close();
    await sim.close();
  }
}

/** Records `count` copies of `template` under new run ids, across `jobs` jobs, 50 at a time. */
async function record(history: RunHistory, template: RunSummary, count: number, jobs: number, from: number) {
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, (_, j) => {
      const n = from + i + j;
      const job = `nightly-pause-${n % jobs}`;
      const finishedAt = new Date().toISOString();
      return history.record({ ...template, job, runId: `${job}@bench-${n}`, finishedAt });
    });
    await Promise.all(batch);
  }
}

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
const count = (n: number) => n.toLocaleString('en-US');

/** Part 1: every role's steady RSS against its bound; resolves to what failed. */
async function roles(
  print: (line: string) => void,
  redisUrl: string,
  onStarted: () => void,
): Promise<string[]> {
  if (!existsSync(fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url))))
    throw new Error('dist/ is missing: run `npm run build` first (the roles run as operators run them)');
  const seconds = Number(values.seconds);
  const dir = mkdtempSync(join(tmpdir(), 'nightshift-memory-'));
  const policy = (jobs: number) => {
    const file = join(dir, `${jobs}.yaml`);
    writeFileSync(file, generatePolicy(jobs, false, { quiet: true }));
    return file;
  };
  const runs: RoleRun[] = [
    ...values.jobs
      .split(',')
      .map(Number)
      .map((jobs) => ({
        label: `scheduler, ${count(jobs)} job${jobs === 1 ? '' : 's'}`,
        args: ['scheduler', policy(jobs)],
        started: 'scheduler started',
        jobs,
        boundMb: jobs <= 1 ? BOUNDS_MB.schedulerOneJob : BOUNDS_MB.scheduler,
      })),
    { label: 'worker, idle', args: ['worker'], started: 'worker started', boundMb: BOUNDS_MB.worker },
    {
      label: 'start, 1 job, idle',
      args: ['start', policy(1)],
      started: 'scheduler started',
      boundMb: BOUNDS_MB.start,
    },
  ];
  print(`  roles, RSS ${seconds} s after the start (all at once, each its own process; peak in brackets):`);
  const measured = await measureRoles(runs, redisUrl, seconds, (afterMs) => {
    print(`    roles started after ${(afterMs / 1000).toFixed(1)} s`);
    onStarted();
  }).finally(() => rmSync(dir, { recursive: true, force: true }));
  const failures: string[] = [];
  for (const { run, rssMb, peakMb, problem } of measured) {
    const over = rssMb > run.boundMb;
    print(
      `    ${run.label.padEnd(24)} ${rssMb.toFixed(1).padStart(6)} MB (${peakMb.toFixed(1)} MB)   bound ${run.boundMb} MB: ${problem ?? (over ? 'EXCEEDED' : 'met')}`,
    );
    if (problem) failures.push(`${run.label}: ${problem}`);
    else if (over) failures.push(`${run.label}: ${rssMb.toFixed(1)} MB, past its bound of ${run.boundMb} MB`);
  }
  const schedulers = measured.filter(({ run }) => run.jobs !== undefined && run.args[0] === 'scheduler');
  const [small, large] = [schedulers[0], schedulers.at(-1)];
  if (small && large && (large.run.jobs as number) > (small.run.jobs as number)) {
    const jobs = (large.run.jobs as number) - (small.run.jobs as number);
    print(
      `    marginal, ${count(small.run.jobs as number)} → ${count(jobs + (small.run.jobs as number))} jobs: ${count(Math.round(((large.rssMb - small.rssMb) * 1_048_576) / jobs))} B of RSS a job`,
    );
  }
  print(
    `    load average at the end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  return failures;
}

/**
 * Parts 2 and 3 on a redis-server of their own: Redis memory per run summary, and retention
 * holding it; resolves to what failed.
 */
async function redisMemory(print: (line: string) => void): Promise<string[]> {
  const failures: string[] = [];
  const redisServer = await startLocalRedis({ appendOnly: false });
  const redis = createRedis({ url: redisServer.url, role: 'bench' });
  try {
    const summaries = Number(values.summaries);
    print(`  redis, ${count(summaries)} run summaries of a pause recorded across 100 jobs, per summary:`);
    const templates: RunSummary[] = [];
    for (const targets of values.targets.split(',').map(Number)) {
      const template = await realSummary(targets);
      templates.push(template);
      const json = Buffer.byteLength(JSON.stringify(template));
      await redis.flushall();
      const history = new RunHistory(redis, { prefix: 'mem' });
      const before = await usedMemory(redis);
      await record(history, template, summaries, 100, 0);
      const used = ((await usedMemory(redis)) - before) / summaries;
      print(
        `    ${count(targets).padStart(4)} workspaces (${template.counts.succeeded} paused, ${template.counts.skipped} skipped): ` +
          `${count(json)} B of JSON, ${count(Math.round(used))} B of used_memory (${((used / json) * 100).toFixed(0)} % of its JSON)`,
      );
    }
    const template = templates[0] as RunSummary;

    const total = Number(values['retention-total']);
    await redis.flushall();
    const bounded = new RunHistory(redis, {
      prefix: 'ret',
      retention: { maxRunsTotal: total, maxRunsPerJob: 500 },
    });
    const start = await usedMemory(redis);
    print(`  retention, total limit ${count(total)}: recorded in steps across 100 jobs (≤ 500 a job)`);
    print('    recorded    kept    keys   used_memory');
    const step = total / 2;
    let recorded = 0;
    const snapshot = async () => {
      const kept = await bounded.count();
      if (kept > total)
        failures.push(`retention kept ${count(kept)} runs past its total limit of ${count(total)}`);
      print(
        `    ${count(recorded).padStart(8)}  ${count(kept).padStart(6)}  ${count(await redis.dbsize()).padStart(6)}   +${mb((await usedMemory(redis)) - start)}`,
      );
    };
    while (recorded < 3 * total) {
      await record(bounded, template, step, 100, recorded);
      recorded += step;
      await snapshot();
    }
    await redis.flushall();
    const perJob = new RunHistory(redis, { prefix: 'job', retention: { maxRunsPerJob: 500 } });
    const jobStart = await usedMemory(redis);
    print('  retention, per-job limit 500: one job');
    print('    recorded    kept    keys   used_memory');
    for (let done = 0; done < 1500; ) {
      await record(perJob, template, 250, 1, done);
      done += 250;
      const kept = await perJob.count();
      if (kept > 500) failures.push(`retention kept ${count(kept)} runs of one job past its limit of 500`);
      print(
        `    ${count(done).padStart(8)}  ${count(kept).padStart(6)}  ${count(await redis.dbsize()).padStart(6)}   +${mb((await usedMemory(redis)) - jobStart)}`,
      );
    }
    return failures;
  } finally {
    redis.disconnect();
    await redisServer.stop();
  }
}

async function bench(): Promise<void> {
  const cpu = cpus();
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  const print = (line: string) => process.stdout.write(`${line}\n`);
  print(
    `memory (node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, load average ${load})`,
  );
  const redisServer = await startLocalRedis({ appendOnly: false });
  try {
    // parts 2 and 3 print once part 1 has: their lines wait meanwhile
    const later: string[] = [];
    let redisParts: Promise<string[]> = Promise.resolve([]);
    const failures = await roles(print, redisServer.url, () => {
      redisParts = redisMemory((line) => later.push(line));
      // awaited below, after part 1: not an unhandled rejection meanwhile
      redisParts.catch(() => {});
    });
    failures.push(...(await redisParts));
    for (const line of later) print(line);
    for (const failure of failures) print(`FAILED: ${failure}`);
    if (failures.length > 0) process.exitCode = 1;
  } finally {
    await redisServer.stop();
  }
}

await bench();
