/**
 * Memory, on a private redis-server:
 *
 * 1. Scheduler RSS with 1,000 and 10,000 jobs loaded (`--jobs`): each size in a fresh child
 *    process run with --expose-gc, which parses a generated policy (varied jobs, as in
 *    policy-validate.ts), loads it into a `Scheduler` and starts it. The baseline is the same
 *    process with a one-job policy loaded and started (so code and caches are warm); both are
 *    read after `global.gc()`. Prints RSS and heap deltas and bytes per job.
 * 2. Redis memory per retained run summary: `used_memory` before and after recording
 *    `--summaries` summaries (default 1,000) through `RunHistory`. The summary is a real one: a
 *    `pause` run over `--targets` workspaces of the simulator (default 10, then 100: a summary
 *    grows with its targets), recorded again under new run ids across 100 jobs.
 * 3. Retention bounds it: 3 × the total limit (10,000, the default) of 10-workspace summaries
 *    recorded across 100 jobs, then 3 × the per-job limit (500) for one job; kept runs, keys and
 *    `used_memory` stop growing.
 *
 *   npx tsx bench/memory.ts [--jobs 1000,10000] [--summaries 1000] [--targets 10,100] [--retention-total 10000]
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { actionRegistry, actions } from '../jobs/index.js';
import type { RunSummary } from '../src/engine/index.js';
import { silentLogger } from '../src/log/logger.js';
import { parsePolicy } from '../src/policy/index.js';
import { createRunQueue, manualRunId } from '../src/queue/run-queue.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { RunHistory } from '../src/store/history.js';
import { startLocalRedis } from '../src/store/local-server.js';
import { PolicyStore } from '../src/store/policy-store.js';
import { createRedis } from '../src/store/redis.js';
import { Suspensions } from '../src/store/suspensions.js';
import { harnessKeyring } from './harness/policy-key.js';

const { values } = parseArgs({
  options: {
    'scheduler-child': { type: 'string' },
    redis: { type: 'string' },
    jobs: { type: 'string', default: '1000,10000' },
    summaries: { type: 'string', default: '1000' },
    targets: { type: 'string', default: '10,100' },
    'retention-total': { type: 'string', default: '10000' },
  },
});

// Daily and weekly schedules only, so no tick comes due while a child measures.
const SCHEDULES = ['0 20 * * 1-5', '30 7 * * 1-5', '0 3 * * 0', '15 2 1 * *', '45 22 * * 5', '0 6 * * 6'];
const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'UTC'];

/** A policy shaped like a large real one (named and inline targets, overrides on some jobs). */
function generatePolicy(jobCount: number): string {
  const lines = [
    'version: 1',
    'defaults:',
    '  timezone: Europe/Berlin',
    '  retry: { attempts: 5, backoff: 10s }',
    '  concurrency: 16',
    'calendars:',
    '  holidays: [2026-12-24, 2026-12-25, 2026-12-31]',
    'targets:',
  ];
  for (let team = 0; team < 50; team += 1) {
    lines.push(
      `  team-${team}:`,
      `    workgroups: ["team-${team}-*"]`,
      `    exclude: ["team-${team}-core/*"]`,
    );
  }
  lines.push('jobs:');
  for (let index = 0; index < jobCount; index += 1) {
    const action = index % 2 === 0 ? 'pause' : 'resume';
    lines.push(
      `  ${action}-${index}:`,
      `    description: ${action} team ${index % 50} workspaces`,
      `    schedule: "${SCHEDULES[index % SCHEDULES.length]}"`,
      `    action: ${action}`,
    );
    if (index % 10 !== 0) lines.push(`    target: team-${index % 50}`);
    else lines.push(`    target: { workgroups: ["wg-${index}"], workspaces: ["ws-*"] }`);
    if (index % 3 === 0) lines.push(`    timezone: ${ZONES[index % ZONES.length]}`);
    if (index % 4 === 0)
      lines.push('    retry: { attempts: 3 }', '    timeout: 15m', '    maxTargets: "25%"');
    if (index % 5 === 0) lines.push('    skip: [holidays]');
  }
  return `${lines.join('\n')}\n`;
}

interface SchedulerMemory {
  jobs: number;
  policyBytes: number;
  rss: number;
  heapUsed: number;
  baseRss: number;
  baseHeapUsed: number;
}

/** Child: one scheduler, a one-job policy then the big one; prints a SchedulerMemory as JSON. */
async function schedulerChild(jobs: number, url: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  const settle = () => {
    gc();
    gc();
    return process.memoryUsage();
  };
  const redis = createRedis({ url, role: 'bench' });
  const prefix = `mem${jobs}`;
  const history = new RunHistory(redis, { prefix });
  const policies = new PolicyStore(redis, { prefix, keyring: harnessKeyring() });
  const queue = createRunQueue({ connection: redis, prefix });
  const scheduler = new Scheduler({
    redis,
    prefix,
    queue,
    policies,
    history,
    suspensions: new Suspensions(redis, { prefix }),
    log: silentLogger,
  });
  const load = async (count: number) => {
    const text = generatePolicy(count);
    await scheduler.load(parsePolicy(text, 'memory.yaml', { registry: actionRegistry, env: {} }), text);
    return Buffer.byteLength(text);
  };
  await load(1);
  await scheduler.start();
  const base = settle();
  const policyBytes = await load(jobs);
  const loaded = settle();
  if (scheduler.upcoming().length !== jobs) throw new Error(`expected ${jobs} jobs scheduled`);
  const result: SchedulerMemory = {
    jobs,
    policyBytes,
    rss: loaded.rss,
    heapUsed: loaded.heapUsed,
    baseRss: base.rss,
    baseHeapUsed: base.heapUsed,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await scheduler.stop();
  await queue.close();
  redis.disconnect();
}

async function measureScheduler(jobs: number, url: string): Promise<SchedulerMemory> {
  const child = spawn(
    process.execPath,
    [
      ...process.execArgv,
      '--expose-gc',
      fileURLToPath(import.meta.url),
      '--scheduler-child',
      String(jobs),
      '--redis',
      url,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`scheduler child for ${jobs} jobs exited with ${code}`);
  return JSON.parse(out) as SchedulerMemory;
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
  const redis = createRedis({ url: redisServer.url, role: 'bench' });
  try {
    print(
      '  scheduler, policy parsed, loaded and started, after gc (fresh process per size; base: one job loaded)',
    );
    const measured: SchedulerMemory[] = [];
    for (const jobs of values.jobs.split(',').map(Number)) {
      const m = await measureScheduler(jobs, redisServer.url);
      measured.push(m);
      const rss = m.rss - m.baseRss;
      const heap = m.heapUsed - m.baseHeapUsed;
      print(
        `    ${count(jobs).padStart(6)} jobs (policy ${count(Math.round(m.policyBytes / 1024))} KiB): RSS ${mb(m.baseRss)} → ${mb(m.rss)}, ` +
          `+${mb(rss)} (${count(Math.round(rss / jobs))} B/job); heap used +${mb(heap)} (${count(Math.round(heap / jobs))} B/job)`,
      );
    }

    const [small, large] = [measured[0], measured.at(-1)];
    if (small && large && large.jobs > small.jobs) {
      // the slope between two sizes: what one more job costs, without what any load costs once
      const jobs = large.jobs - small.jobs;
      print(
        `    marginal, ${count(small.jobs)} → ${count(large.jobs)} jobs: ` +
          `RSS ${count(Math.round((large.rss - large.baseRss - (small.rss - small.baseRss)) / jobs))} B/job, ` +
          `heap used ${count(Math.round((large.heapUsed - large.baseHeapUsed - (small.heapUsed - small.baseHeapUsed)) / jobs))} B/job`,
      );
    }

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
      print(
        `    ${count(done).padStart(8)}  ${count(await perJob.count()).padStart(6)}  ${count(await redis.dbsize()).padStart(6)}   +${mb((await usedMemory(redis)) - jobStart)}`,
      );
    }
  } finally {
    redis.disconnect();
    await redisServer.stop();
  }
}

if (values['scheduler-child'])
  await schedulerChild(Number(values['scheduler-child']), values.redis as string);
else await bench();
