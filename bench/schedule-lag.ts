/**
 * Schedule lag: N jobs firing in the same second, one scheduler and one worker on a private
 * Redis, the simulator as the API. Prints p50/p99/max lag from each tick's instant to its run
 * starting, and counts missed and duplicated ticks. Goal: p99 under 250 ms at 1,000 jobs.
 *
 *   npx tsx bench/schedule-lag.ts [jobs=1000] [ticks=2]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { actionRegistry, actions } from '../jobs/index.js';
import { ApiClient } from '../src/api/index.js';
import { createLogger, silentLogger } from '../src/log/logger.js';
import { parsePolicy } from '../src/policy/index.js';
import { RedisCheckpointStore } from '../src/queue/checkpoint.js';
import { RunHistory } from '../src/queue/history.js';
import { PolicyStore } from '../src/queue/policy-store.js';
import { createRedis } from '../src/queue/redis.js';
import { createRunQueue } from '../src/queue/run-queue.js';
import { RunWorker } from '../src/queue/run-worker.js';
import { Suspensions } from '../src/queue/suspensions.js';
import { startLocalRedis } from '../src/redis/local-server.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { startSimulator } from '../src/sim/index.js';

const jobs = Number(process.argv[2] ?? 1000);
const ticks = Number(process.argv[3] ?? 2);
const PERIOD_S = 5;

const redisServer = await startLocalRedis({ appendOnly: false });
const sim = await startSimulator({ port: 0, fleet: { workgroups: 2, workspacesPerWorkgroup: 2 } });
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
const prefix = 'lag';
const queue = createRunQueue({ connection: redis, prefix });
const history = new RunHistory(redis, { prefix, retention: { maxRunsPerJob: 100, maxRunsTotal: 100_000 } });
const policies = new PolicyStore(redis, { prefix });
const api = new ApiClient({ baseUrl: sim.url, apiKey: 'sim-api-key' });
const worker = new RunWorker({
  redis: createRedis({ url: redisServer.url, role: 'bench-worker' }),
  prefix,
  api,
  actions,
  registry: actionRegistry,
  env: {},
  policies,
  history,
  checkpoints: new RedisCheckpointStore(redis, { prefix }),
  log: silentLogger,
  concurrency: 500,
});
worker.start();
const scheduler = new Scheduler({
  redis,
  prefix,
  queue,
  policies,
  history,
  suspensions: new Suspensions(redis, { prefix }),
  log: process.env.BENCH_DEBUG ? createLogger({ destination: process.stderr }) : silentLogger,
});
await scheduler.load(policy, text);
await scheduler.start();

const expected = jobs * ticks;
const deadline = Date.now() + (ticks + 2) * PERIOD_S * 1000 + 30_000;
let recorded = 0;
while (Date.now() < deadline) {
  recorded = await history.count();
  if (recorded >= expected) break;
  await sleep(250);
}
await scheduler.stop();
const runs = await history.list({ limit: expected + jobs });
const lags = runs
  .filter((run) => run.startedAt && run.scheduledAt)
  .map((run) => Date.parse(run.startedAt as string) - Date.parse(run.scheduledAt as string))
  .sort((a, b) => a - b);
const ids = new Set(runs.map((run) => run.runId));
const pct = (p: number) => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))] ?? Number.NaN;
process.stdout.write(
  `${[
    `schedule lag: ${jobs} jobs firing together, ${ticks} ticks, 1 scheduler + 1 worker (concurrency 500), private redis-server`,
    `  runs expected ${expected}, recorded ${runs.length}, distinct ${ids.size}, duplicated ${runs.length - ids.size}, missed ${expected - ids.size}`,
    `  lag p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${lags.at(-1)} ms (goal p99 < 250 ms at 1,000 jobs)`,
  ].join('\n')}\n`,
);
await worker.close(5_000);
await queue.close();
redis.disconnect();
await api.close();
await sim.close();
await redisServer.stop();
process.exit(0);
