/**
 * Schedule lag: N jobs firing in the same second, one scheduler and one worker on a private
 * Redis, the simulator (in a process of its own, as a remote API would be) as the API. Prints
 * p50/p99/max lag from each tick's instant to its run starting and to the run's first API call
 * (when the simulator answered it; and, by tick, when the worker asked), when the ticks were
 * handed to the queue and picked up, and counts missed and duplicated ticks. A run's first call
 * is its fleet listing, which the runs of a worker listing at the same time share (one request,
 * named in each run's summary): the figures are per run, and it prints how many requests served them. The ticks measured
 * are the first the scheduler hands over a whole lead ahead. Goal (issue 22): the first API call's
 * p99 within 250 ms at 1,000 jobs; exits 1 past it, or when a tick is missed or run twice. The
 * worker is set up as `nightshift worker` sets it up (suspended jobs skipped, each run's start
 * recorded, both read in Redis as the run starts; the ownership ledger's sequence read before each
 * listing; BullMQ on one Redis connection, the stores on an auto-pipelined other); its concurrency is the job count (every run of
 * a burst can start at once); the scheduler's lead is 2 s per 1,000 jobs, at least 2 s. Needs
 * `npm run build` (the simulator runs from dist/).
 *
 * `--warm-up N` runs N ticks before the measured ones, checked for missed and duplicated runs but
 * left out of the lag figures and the goal: a worker's first burst also measures its cold code and
 * the simulator's cold connections, which a long-running worker has long paid (bench:smoke uses
 * one). `--judge asked` holds the goal against the instant the worker asked for its first call
 * (the client's call record) instead of the instant the simulator answered it: the worker's own
 * lag, which the simulator's serving of a burst on a loaded machine does not move (bench:smoke
 * judges this one). `--figures FILE` writes the figures as JSON.
 *
 *   npx tsx bench/schedule-lag.ts [jobs=1000] [ticks=2] [leadMs] [--warm-up 0] [--judge answered|asked] [--figures FILE]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { actionRegistry, actions } from '../jobs/index.js';
import { ApiClient } from '../src/api/index.js';
import { workerStores } from '../src/cli/worker-wiring.js';
import { nodeActionIo, type RunSummary } from '../src/engine/index.js';
import { createLogger, silentLogger } from '../src/log/logger.js';
import { nextFirings, parsePolicy } from '../src/policy/index.js';
import { createRunQueue, enqueueRuns } from '../src/queue/run-queue.js';
import { RunWorker } from '../src/queue/run-worker.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import type { RequestLogEntry } from '../src/sim/index.js';
import { RedisCheckpointStore } from '../src/store/checkpoint.js';
import { fleetStateStores } from '../src/store/fleet-state.js';
import { RunHistory } from '../src/store/history.js';
import { LastTicks, RedisWindowStates } from '../src/store/index.js';
import { startLocalRedis } from '../src/store/local-server.js';
import { PolicyStore } from '../src/store/policy-store.js';
import { createRedis } from '../src/store/redis.js';
import { RunStarts } from '../src/store/run-starts.js';
import { Suspensions } from '../src/store/suspensions.js';
import { systemClock } from '../src/time/index.js';
import { harnessKeyring } from './harness/policy-key.js';

const { values, positionals } = parseArgs({
  options: {
    'warm-up': { type: 'string', default: '0' },
    judge: { type: 'string', default: 'answered' },
    figures: { type: 'string' },
  },
  allowPositionals: true,
});
const jobs = Number(positionals[0] ?? 1000);
const ticks = Number(positionals[1] ?? 2);
const leadMs = Number(positionals[2] ?? Math.max(2000, jobs * 2));
const warmUp = Number(values['warm-up']);
if (values.judge !== 'answered' && values.judge !== 'asked') {
  process.stderr.write(`schedule-lag: --judge: "${values.judge}" is not answered or asked\n`);
  process.exit(2);
}
const PERIOD_S = Math.max(5, Math.ceil((leadMs * 2) / 1000));

const redisServer = await startLocalRedis({ appendOnly: false });
const simChild = spawn(
  process.execPath,
  [fileURLToPath(new URL('../bin/nightshift.js', import.meta.url)), 'sim', '--port', '0', '--fleet', '2x2'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const [firstLine] = (await once(simChild.stdout, 'data')) as [Buffer];
const sim = JSON.parse(firstLine.toString().split('\n')[0] as string) as { url: string };
const lines = ['version: 1', 'targets:', '  all: { workgroups: ["*"] }', 'jobs:'];
for (let i = 0; i < jobs; i++) {
  lines.push(
    `  j${i}:`,
    `    schedule: "*/${PERIOD_S} * * * * *"`,
    '    action: pause',
    '    target: all',
    '    dryRun: true',
  );
}
const text = `${lines.join('\n')}\n`;
const policy = parsePolicy(text, 'lag.yaml', { registry: actionRegistry, env: {} });

const redis = createRedis({ url: redisServer.url, role: 'bench' });
// as a service connects (src/cli/runtime.ts): BullMQ on one connection, the stores on another
// whose commands of one turn of the event loop leave in one write
const stores = createRedis({ url: redisServer.url, role: 'bench-state', enableAutoPipelining: true });
const prefix = 'lag';
const queue = createRunQueue({ connection: redis, prefix, keepFinished: 4 * jobs * ticks });
const history = new RunHistory(stores, { prefix, retention: { maxRunsPerJob: 100, maxRunsTotal: 100_000 } });
const policies = new PolicyStore(stores, { prefix, keyring: harnessKeyring() });
ApiClient.prepare(); // as the worker role does at start
/**
 * When each listing request began in the worker, by request ID: what the worker controls, before
 * the API answers. Runs listing at the same time share a request (src/engine/shared-listing.ts).
 */
const asked = new Map<string, number>();
const api = new ApiClient({
  baseUrl: sim.url,
  apiKey: 'sim-api-key',
  onCall: (call) => {
    if (call.operation === 'listWorkgroups' && call.requestId)
      asked.set(call.requestId, Math.round(Date.now() - call.durationMs));
  },
});
const worker = new RunWorker({
  redis: createRedis({ url: redisServer.url, role: 'bench-worker' }),
  stores: workerStores({
    connection: stores,
    prefix,
    starts: new RunStarts(stores, { prefix }),
    log: silentLogger,
  }),
  prefix,
  api,
  io: nodeActionIo({ environment: process.env }),
  actions,
  registry: actionRegistry,
  env: {},
  policies,
  history,
  checkpoints: new RedisCheckpointStore(stores, { prefix }),
  // as `nightshift worker` sets it up: suspended jobs skipped, each run's start recorded
  checkSuspensions: true,
  state: fleetStateStores(stores, prefix),
  log: silentLogger,
  concurrency: jobs,
});
worker.start();
const scheduler = new Scheduler({
  lastTicks: new LastTicks(redis, { prefix }),
  windowStates: new RedisWindowStates(redis, { prefix }),
  enqueue: (runs) => enqueueRuns(queue, runs),
  clock: systemClock,
  policies,
  history,
  suspensions: new Suspensions(redis, { prefix }),
  log: process.env.BENCH_DEBUG ? createLogger({ destination: process.stderr }) : silentLogger,
  leadMs,
});
await scheduler.load(policy, text);
await scheduler.start();

const expected = jobs * (warmUp + ticks);
const startedAt = Date.now();
const deadline = startedAt + (ticks + 2) * PERIOD_S * 1000 + 30_000;
/**
 * The first `warmUp + ticks` tick instants the scheduler hands over a whole lead ahead: a tick due
 * sooner after its start would measure the start (the worker's first parse of the policy, its cold
 * code), not a burst. The last `ticks` of them are measured.
 */
const fired = nextFirings(policy.jobs[0]?.schedule as never, {
  from: new Date(startedAt + leadMs),
  count: warmUp + ticks,
}).map((firing) => firing.at.toISOString());
const measured = fired.slice(warmUp);
const inWindow = (run: RunSummary) => fired.includes(run.scheduledAt ?? '');
let runs: RunSummary[] = [];
// Reading the history (thousands of summaries) costs this process, the worker's, CPU: not while a
// measured burst is under way.
await sleep(Date.parse(fired.at(-1) as string) + 1_000 - Date.now());
while (Date.now() < deadline) {
  runs = (await history.list({ limit: expected + 2 * jobs })).filter(inWindow);
  if (runs.length >= expected) break;
  await sleep(250);
}
await scheduler.stop();
await sleep(500); // a duplicate, if there were one, would be recorded by now
runs = (await history.list({ limit: expected + 3 * jobs })).filter(inWindow);
const handedOver = await queue.getJobs(['completed'], 0, expected + 3 * jobs);
const timedRuns = runs.filter((run) => measured.includes(run.scheduledAt ?? ''));
const leads = handedOver
  .filter((job) => measured.includes(job.data.scheduledAt ?? ''))
  .map((job) => Date.parse(job.data.scheduledAt as string) - job.timestamp)
  .sort((a, b) => a - b);
// the simulator keeps its last 10,000 requests: all of them at 1,000 jobs, the last tick's at 10,000
const requests = (await (await fetch(`${sim.url}/_sim/requests`)).json()) as RequestLogEntry[];
const answered = new Map(
  requests
    .filter((entry) => entry.operation === 'listWorkgroups')
    .map((entry) => [entry.requestId, Date.parse(entry.time)]),
);
/**
 * Each run's lag from its tick to its first API call (a dry-run pause makes one call, its
 * listing, which runs listing together share: the run's summary names its request), as `at`
 * says when that request was asked or answered; by tick, warm-up ones first, each sorted.
 */
const firstCallLags = (at: Map<string, number>) =>
  fired.map((iso) => {
    const tick = Date.parse(iso);
    return runs
      .filter((run) => run.scheduledAt === iso)
      .flatMap((run) => {
        const instant = at.get(run.requestIds[0] ?? '');
        return instant === undefined ? [] : [instant - tick];
      })
      .sort((a, b) => a - b);
  });
const answeredByTick = firstCallLags(answered);
const askedByTick = firstCallLags(asked);
const listingRequests = fired
  .slice(warmUp)
  .map((iso) => new Set(runs.filter((run) => run.scheduledAt === iso).map((run) => run.requestIds[0])).size);
const firstCalls = answeredByTick
  .slice(warmUp)
  .flat()
  .sort((a, b) => a - b);
const firstAsked = askedByTick
  .slice(warmUp)
  .flat()
  .sort((a, b) => a - b);
const pickups = handedOver
  .filter((job) => measured.includes(job.data.scheduledAt ?? ''))
  .map((job) => Date.parse(job.data.scheduledAt as string) - (job.processedOn ?? 0))
  .sort((a, b) => a - b);
const lags = timedRuns
  .filter((run) => run.startedAt && run.scheduledAt)
  .map((run) => Date.parse(run.startedAt as string) - Date.parse(run.scheduledAt as string))
  .sort((a, b) => a - b);
const ids = new Set(runs.map((run) => run.runId));
const pct = (values: number[], p: number) =>
  values[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? Number.NaN;
const byTick = (label: string, lags: number[][]) =>
  `  ${label}, by tick: ${lags.map((v, i) => `${i < warmUp ? 'warm-up: ' : ''}p50 ${pct(v, 50)} ms, p99 ${pct(v, 99)} ms (${v.length})`).join('; ')}`;
/** The goal of issue 22, at 1,000 jobs and fewer: the first API call p99 within 250 ms of the tick. */
const GOAL_P99_MS = 250;
const judged = values.judge === 'asked' ? firstAsked : firstCalls;
const problems = [
  ...(ids.size < expected || runs.length > ids.size
    ? [`${expected - ids.size} runs missed, ${runs.length - ids.size} duplicated`]
    : []),
  ...(judged.length < jobs * ticks
    ? [
        `${judged.length} runs' first API calls ${values.judge} in the measured ticks, expected ${jobs * ticks}`,
      ]
    : []),
  ...(jobs <= 1000 && !(pct(judged, 99) <= GOAL_P99_MS)
    ? [`first API call (${values.judge}) p99 ${pct(judged, 99)} ms, past the goal of ${GOAL_P99_MS} ms`]
    : []),
];
process.stdout.write(
  `${[
    `schedule lag: ${jobs} jobs firing together, ${ticks} ticks measured${warmUp ? ` after ${warmUp} warm-up tick${warmUp === 1 ? '' : 's'}` : ''}, 1 scheduler (lead ${leadMs} ms) + 1 worker (concurrency ${jobs}), private redis-server`,
    `  runs expected ${expected}, recorded ${runs.length}, distinct ${ids.size}, duplicated ${runs.length - ids.size}, missed ${expected - ids.size}`,
    `  handed to the queue ahead of the tick: min ${leads[0]} ms, p50 ${pct(leads, 50)} ms`,
    `  picked up by the worker ahead of the tick: min ${pickups[0]} ms, p50 ${pct(pickups, 50)} ms`,
    `  each run's first API call after the tick (answered, in the simulator's log): p50 ${pct(firstCalls, 50)} ms, p99 ${pct(firstCalls, 99)} ms, max ${firstCalls.at(-1)} ms (${firstCalls.length} runs; listing requests by tick: ${listingRequests.join(', ')})`,
    `  the worker asking for it: p50 ${pct(firstAsked, 50)} ms, p99 ${pct(firstAsked, 99)} ms, max ${firstAsked.at(-1)} ms`,
    byTick('    answered', answeredByTick),
    byTick('    asked by the worker', askedByTick),
    `  machine: ${cpus().length} × ${cpus()[0]?.model}, node ${process.version}, load average ${loadavg()[0]?.toFixed(2)}`,
    `  run start p50 ${pct(lags, 50)} ms, p99 ${pct(lags, 99)} ms, max ${lags.at(-1)} ms, min ${lags[0]} ms`,
    ...problems.map((problem) => `FAILED: ${problem}`),
  ].join('\n')}\n`,
);
if (values.figures)
  writeFileSync(
    values.figures,
    `${JSON.stringify(
      {
        load: loadavg(),
        jobs,
        ticks,
        warmUp,
        firstCallP99Ms: pct(firstCalls, 99),
        askedP99Ms: pct(firstAsked, 99),
        runStartP99Ms: pct(lags, 99),
        missed: expected - ids.size,
        duplicated: runs.length - ids.size,
      },
      null,
      2,
    )}\n`,
  );
await worker.close(5_000);
await queue.close();
redis.disconnect();
stores.disconnect();
await api.close();
simChild.kill('SIGTERM');
await redisServer.stop();
process.exit(problems.length > 0 ? 1 : 0);
