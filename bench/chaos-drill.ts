/**
 * `npm run chaos`: the chaos drill at full size (bench/harness/chaos-drill.ts says what it does and how
 * every figure is defined). 2,000 workspaces (200 workgroups × 10), 3 `nightshift worker` and 2
 * `nightshift scheduler` processes, the simulator with 5 % 500s, 2 % hangs and a throttle of
 * 400 req/s; for three minutes a worker is SIGKILLed every few seconds and started again, Redis
 * is restarted once and a scheduler once; then the faults stop (not the throttle), one tick runs
 * in quiet and the report is printed as Markdown tables, followed by the bad-input round
 * (bench/harness/bad-input.ts) and one run of each edge drill scenario (bench/harness/edge-drill.ts;
 * bench/edge-drill.ts runs them with every option and `--repeat`). Exit 1 if any goal fails.
 *
 *   npm run build && npm run chaos [-- --workgroups 200] [--per-workgroup 10] [--chaos-s 180]
 *     [--tick-s 30] [--kill-every-s 8] [--victims any|busy] [--throttle 400] [--concurrency 200]
 *     [--lock-ms 5000] [--max-stalls 10] [--part-size 500] [--seed 1] [--policies 1000] [--responses 10000] [--no-bad-input]
 *     [--edge redis-outage,sigkill,sentinel,split-outage] [--no-edge] [--json]
 *
 * A kill hits a worker executing a run whenever one is (`--victims any`: any of the three, most
 * often an idle one). A resume run of the whole fleet lasts about 45 s under these kills, so it
 * can lose its worker six times or more: the drill lets a run survive 10 (NIGHTSHIFT_MAX_STALLS;
 * the workers' default is 5, past which a run is recorded as failed, `abandoned`). Run one at a time:
 * it needs most of a 2-core machine for about six minutes, and the edge drill for about 15 more.
 */
import { parseArgs } from 'node:util';
import { runBadInputRound } from './harness/bad-input.js';
import { assertDistFresh, formatReport, runChaosDrill } from './harness/chaos-drill.js';
import { EDGE_SCENARIOS, type EdgeScenario } from './harness/edge-drill.js';
import { runEdgeDrills } from './harness/edge-drill-report.js';
import { assertBuilt } from './harness/nightshift-process.js';

const { values } = parseArgs({
  options: {
    workgroups: { type: 'string', default: '200' },
    'per-workgroup': { type: 'string', default: '10' },
    'chaos-s': { type: 'string', default: '180' },
    'tick-s': { type: 'string', default: '30' },
    'kill-every-s': { type: 'string', default: '8' },
    throttle: { type: 'string', default: '400' },
    victims: { type: 'string', default: 'busy' },
    concurrency: { type: 'string', default: '200' },
    'lock-ms': { type: 'string', default: '5000' },
    'max-stalls': { type: 'string', default: '10' },
    'part-size': { type: 'string', default: '500' },
    seed: { type: 'string', default: '1' },
    policies: { type: 'string', default: '1000' },
    responses: { type: 'string', default: '10000' },
    'no-bad-input': { type: 'boolean', default: false },
    edge: { type: 'string', default: EDGE_SCENARIOS.join(',') },
    'no-edge': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

const edge = values['no-edge'] ? [] : (values.edge ?? '').split(',').map((s) => s.trim());
for (const scenario of edge)
  if (!EDGE_SCENARIOS.includes(scenario as EdgeScenario)) {
    process.stderr.write(`chaos-drill: --edge: "${scenario}" is not one of ${EDGE_SCENARIOS.join(', ')}\n`);
    process.exit(2);
  }
assertDistFresh();
assertBuilt();
const started = (at: number) => `[${((Date.now() - at) / 1000).toFixed(1).padStart(6)} s]`;
const t0 = Date.now();
const report = await runChaosDrill({
  workgroups: Number(values.workgroups),
  workspacesPerWorkgroup: Number(values['per-workgroup']),
  tickSeconds: Number(values['tick-s']),
  chaosMs: Number(values['chaos-s']) * 1000,
  killEveryMs: Number(values['kill-every-s']) * 1000,
  faults: { errorRate: 0.05, hangRate: 0.02, throttleRps: Number(values.throttle) },
  victims: values.victims === 'any' ? 'any' : 'busy',
  concurrency: Number(values.concurrency),
  transitionMs: 500,
  lockMs: Number(values['lock-ms']),
  maxStalls: Number(values['max-stalls']),
  partSize: Number(values['part-size']),
  pollIntervalMs: 500,
  apiTimeoutMs: 3_000,
  seed: Number(values.seed),
  settleTimeoutMs: 300_000,
  progress: (line) => process.stderr.write(`${started(t0)} ${line}\n`),
});
let ok = report.ok;
if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else process.stdout.write(`\n${formatReport(report)}\n`);

if (!values['no-bad-input']) {
  const bad = await runBadInputRound({
    policies: Number(values.policies),
    responses: Number(values.responses),
    seed: Number(values.seed),
  });
  process.stdout.write(`\n${bad.text}\n`);
  ok &&= bad.ok;
}

if (edge.length > 0) {
  const series = await runEdgeDrills(edge as EdgeScenario[], 1, {
    progress: (line) => process.stderr.write(`${started(t0)} ${line}\n`),
  });
  if (values.json) process.stdout.write(`${JSON.stringify(series.reports, null, 2)}\n`);
  else process.stdout.write(`\n${series.text}\n`);
  ok &&= series.ok;
}
process.exitCode = ok ? 0 : 1;
