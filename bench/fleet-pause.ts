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
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ApiClient } from '../src/api/index.js';
import { type LocalRedis, startLocalRedis } from '../src/store/local-server.js';
import { createRedis } from '../src/store/redis.js';
import { measure, type Rig, resetFleet } from './harness/fleet-pause-measure.js';
import {
  API_KEY,
  type FleetSize,
  fleetSize,
  PARTS,
  SimChild,
  serveSimulator,
} from './harness/fleet-pause-sim.js';
import { count, fmt, median, ResultTable, TABLE_HEADER } from './harness/fleet-pause-table.js';

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

/** The CLI's `nightshift worker`, from the sources. */
async function nightshiftWorker(): Promise<void> {
  const { main } = await import('../src/cli/main.js');
  process.exitCode = await main([process.argv[0] as string, 'nightshift', 'worker']);
}

const numbers = (text: string) =>
  text
    .split(',')
    .map(Number)
    .filter((n) => n > 0);

interface Options {
  mainFleet: FleetSize;
  rateFleet: FleetSize;
  latencyMs: number;
  concurrency: number;
  rate: number;
  repeat: number;
  sample: number;
  workerCounts: number[];
  rateWorkers: number[];
}

function readOptions(): Options {
  const mainFleet: FleetSize = {
    workgroups: Number(values.workgroups),
    perWorkgroup: Number(values['per-workgroup']),
  };
  const concurrency = Number(values.concurrency);
  const workerCounts = numbers(values.workers);
  const rateWorkers = numbers(values['rate-workers']);
  for (const k of [...workerCounts, ...rateWorkers]) {
    if (PARTS % k !== 0 || concurrency % k !== 0)
      throw new Error(
        `--workers ${k}: must divide ${PARTS} (parts of the fleet) and --concurrency ${concurrency}`,
      );
  }
  return {
    mainFleet,
    rateFleet: { ...mainFleet, workgroups: Number(values['rate-workgroups']) },
    latencyMs: Number(values['latency-ms']),
    concurrency,
    rate: Number(values.rate),
    repeat: Number(values.repeat),
    sample: Number(values['sequential-sample']),
    workerCounts,
    rateWorkers,
  };
}

function printHeading({ latencyMs, concurrency, repeat }: Options): void {
  const cpu = cpus();
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  process.stdout.write(
    `fleet pause (node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, load average ${load})\n` +
      `  simulator in a child process, ${latencyMs} ms latency on every call, C = ${concurrency} calls in flight in all, ` +
      `private redis-server, median of ${repeat} run${repeat === 1 ? '' : 's'} per variant\n`,
  );
}

/** A private redis-server, the simulator child and a client of it, and how to start each kind of worker. */
async function setUp(options: Options): Promise<{ rig: Rig; redisServer: LocalRedis }> {
  const redisServer = await startLocalRedis({ appendOnly: false });
  const redis = createRedis({ url: redisServer.url, role: 'bench' });
  const sim = await SimChild.start(fileURLToPath(import.meta.url), values['latency-ms']);
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
  const rig: Rig = {
    redisUrl: redisServer.url,
    redis,
    sim,
    api,
    workerScript,
    baselineScript,
    concurrency: options.concurrency,
    repeat: options.repeat,
    perWorker: Number(values['per-worker']),
    partSize: values['part-size'],
  };
  return { rig, redisServer };
}

/** The list-workgroups call's median time of three on a warm list cache, in ms: the ideal's fixed part. */
async function listMs(rig: Rig): Promise<number> {
  await resetFleet(rig);
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await rig.api.listWorkgroups();
    times.push(performance.now() - started);
  }
  return median(times);
}

/** The sequential loop: list, then one pause after another, as a shell script would. */
async function sequentialLoop(
  rig: Rig,
  table: ResultTable,
  setup: { n: number; sample: number; ideal: number },
) {
  const { n, ideal } = setup;
  await resetFleet(rig);
  const sampleSize = Math.min(setup.sample, n);
  const started = performance.now();
  const { result: fleet } = await rig.api.listWorkgroups();
  const listed = performance.now();
  const targets = fleet.flatMap((wg) =>
    (wg.workspaces ?? []).map((ws) => [wg.workgroup_id, ws.workspace_id]),
  );
  for (const [workgroupId, workspaceId] of targets.slice(0, sampleSize))
    await rig.api.pauseWorkspace(workgroupId as string, workspaceId as string);
  const perPause = (performance.now() - listed) / sampleSize;
  table.row(
    `sequential loop (${count(sampleSize)} timed, extrapolated)`,
    n,
    (listed - started + n * perPause) / 1000,
    ideal,
    {},
  );
}

/** The main fleet: the sequential loop, then the baseline and nightshift with each number of workers. */
async function compareWorkers(rig: Rig, table: ResultTable, options: Options): Promise<void> {
  const { mainFleet, latencyMs, concurrency } = options;
  const n = fleetSize(mainFleet);
  await rig.sim.ask({ op: 'fleet', fleet: mainFleet });
  const list = (await listMs(rig)) / 1000;
  const ideal = list + (n * latencyMs) / concurrency / 1000;
  process.stdout.write(
    `  ${mainFleet.workgroups}×${mainFleet.perWorkgroup} = ${count(n)} Active workspaces; ideal = list-workgroups ` +
      `(${fmt(list * 1000, 0)} ms measured) + N × L / C (${fmt((n * latencyMs) / concurrency / 1000)} s) = ${fmt(ideal)} s\n`,
  );
  process.stdout.write(`${TABLE_HEADER}\n`);
  await sequentialLoop(rig, table, { n, sample: options.sample, ideal });

  for (const workers of options.workerCounts) {
    const plural = workers === 1 ? 'worker' : 'workers';
    await table.run(
      {
        label: `BullMQ + undici baseline, ${workers} ${plural}`,
        kind: 'baseline',
        workers,
        fleet: mainFleet,
      },
      ideal,
    );
    await table.run(
      { label: `nightshift, ${workers} ${plural}`, kind: 'nightshift', workers, fleet: mainFleet },
      ideal,
    );
  }
  if (!values['skip-warn'])
    await table.run(
      {
        label: 'nightshift, 1 worker, log level warn',
        kind: 'nightshift',
        workers: 1,
        fleet: mainFleet,
        logLevel: 'warn',
      },
      ideal,
    );
}

/** The smaller fleet under the API rate limit the workers share. */
async function rateLimited(rig: Rig, table: ResultTable, options: Options): Promise<void> {
  const { rateFleet, rate, latencyMs, concurrency } = options;
  const rn = fleetSize(rateFleet);
  await rig.sim.ask({ op: 'fleet', fleet: rateFleet });
  const rateList = (await listMs(rig)) / 1000;
  const rateIdeal =
    rateList + Math.max((rn * latencyMs) / concurrency, ((rn + 1 - rate) * 1000) / rate) / 1000;
  process.stdout.write(
    `  rate limit ${rate}/s shared through Redis, ${rateFleet.workgroups}×${rateFleet.perWorkgroup} = ${count(rn)} workspaces; ` +
      `ideal = list (${fmt(rateList * 1000, 0)} ms) + max(N × L / C, (N + 1 − ${rate}) / R) = ${fmt(rateIdeal)} s (N / R = ${fmt(rn / rate)} s)\n`,
  );
  for (const workers of options.rateWorkers) {
    await table.run(
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

/** K jobs of N/K workspaces for K workers, nightshift beside the sequential loop and the baseline. */
async function sideBySide(rig: Rig, table: ResultTable, options: Options): Promise<void> {
  await compareWorkers(rig, table, options);
  if (options.rateWorkers.length > 0 && options.rate > 0) await rateLimited(rig, table, options);
  process.stdout.write(
    `  goals: nightshift ≤ 1.15× the ideal, and within 1.2× of the baseline with as many workers; ` +
      `K workers run K jobs of N/K workspaces with concurrency C/K each (one run executes on one worker)\n`,
  );
}

/** `--one-run`: one job over the whole fleet, its run shared by K workers, against K = 1's wall time. */
async function oneRun(rig: Rig, table: ResultTable, options: Options): Promise<void> {
  const { perWorker } = rig;
  const { mainFleet: fleet, latencyMs } = options;
  const n = fleetSize(fleet);
  const window = values.window;
  const what = window ? 'a window whose off edge covers' : 'one job over';
  await rig.sim.ask({ op: 'fleet', fleet });
  const list = (await listMs(rig)) / 1000;
  process.stdout.write(
    `  ${what} ${count(n)} Active workspaces, its run split into parts of ${values['part-size']}; ` +
      `${perWorker} calls in flight per worker; ideal = list-workgroups (${fmt(list * 1000, 0)} ms) + N × L / (${perWorker} × K)\n`,
  );
  process.stdout.write(`${TABLE_HEADER}\n`);
  let single: number | undefined;
  for (const workers of options.workerCounts) {
    const ideal = list + (n * latencyMs) / (perWorker * workers) / 1000;
    const wallS = await table.run(
      {
        label: `nightshift, ${window ? 'window edge' : 'one run'}, ${workers} worker${workers === 1 ? '' : 's'}`,
        kind: 'nightshift',
        workers,
        fleet,
        oneRun: true,
        window,
      },
      ideal,
    );
    single ??= workers === 1 ? wallS : undefined;
    if (single && workers > 1) {
      process.stdout.write(`    ${fmt(wallS / single)}× the wall time of 1 worker\n`);
      const last = table.figures.at(-1);
      if (last) last.vsOneWorker = wallS / single;
    }
  }
  const { rate } = options;
  for (const workers of rate > 0 ? options.rateWorkers : []) {
    // the limiter's bucket starts full with R tokens, and the list call takes one
    const ideal =
      list + Math.max((n * latencyMs) / (perWorker * workers), ((n + 1 - rate) * 1000) / rate) / 1000;
    process.stdout.write(
      `  rate limit ${rate}/s shared through Redis; ideal = list + max(N × L / (${perWorker} × K), (N + 1 − R) / R)\n`,
    );
    await table.run(
      {
        label: `nightshift, ${window ? 'window edge' : 'one run'}, ${workers} worker${workers === 1 ? '' : 's'}, ${rate} req/s`,
        kind: 'nightshift',
        workers,
        fleet,
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

async function bench(): Promise<void> {
  const options = readOptions();
  printHeading(options);
  const { rig, redisServer } = await setUp(options);
  const table = new ResultTable((variant) => measure(rig, variant), options.repeat);
  try {
    if (values['one-run']) await oneRun(rig, table, options);
    else await sideBySide(rig, table, options);
  } finally {
    rig.sim.child.kill('SIGTERM');
    await rig.api.close();
    rig.redis.disconnect();
    await redisServer.stop();
  }
  table.writeFigures(values.figures);
  process.exitCode = table.failed ? 1 : 0;
}

if (values.serve) await serveSimulator(Number(values['latency-ms']));
else if (values['nightshift-worker']) await nightshiftWorker();
else await bench();
