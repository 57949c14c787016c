/**
 * The edge drill (bench/harness/edge-drill.ts says what each scenario does and how every figure
 * is defined): a window's off edge over 3,000 workspaces (80 × 50 outside prod-*, 200 ms a call),
 * two workers and a scheduler, with Redis stopped for 25 s, the edge's worker SIGKILLed or the
 * Redis primary failed over 6 s into the edge; and a split `pause` run with Redis stopped halfway.
 * Prints one row per run, then each run in full, as Markdown; exit 1 if any check fails.
 *
 *   npm run build && npx tsx bench/edge-drill.ts [--scenario redis-outage,sigkill,sentinel,split-outage]
 *     [--repeat 1] [--fleet 80x50] [--latency-ms 200] [--transition-ms 3000] [--outage-s 25]
 *     [--outage-after-s 6] [--off-minutes 2] [--concurrency N] [--lock-ms N] [--part-size 500]
 *     [--worker-concurrency N] [--json]
 *
 * Each run takes 3–4 minutes (the off edge waits for a whole minute, the off period lasts two);
 * runs go one at a time. `--repeat 5` gives issue 21's "5 runs of 5".
 */
import { parseArgs } from 'node:util';
import { EDGE_SCENARIOS, type EdgeScenario } from './harness/edge-drill.js';
import { runEdgeDrills } from './harness/edge-drill-report.js';
import { assertBuilt } from './harness/nightshift-process.js';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: EDGE_SCENARIOS.join(',') },
    repeat: { type: 'string', default: '1' },
    fleet: { type: 'string', default: '80x50' },
    'latency-ms': { type: 'string', default: '200' },
    'transition-ms': { type: 'string', default: '3000' },
    'outage-s': { type: 'string', default: '25' },
    'outage-after-s': { type: 'string', default: '6' },
    'off-minutes': { type: 'string', default: '2' },
    concurrency: { type: 'string' },
    'lock-ms': { type: 'string' },
    'part-size': { type: 'string', default: '500' },
    'worker-concurrency': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

function usage(message: string): never {
  process.stderr.write(`edge-drill: ${message}\n`);
  process.exit(2);
}

const scenarios = (values.scenario ?? '').split(',').map((s) => s.trim());
for (const scenario of scenarios)
  if (!EDGE_SCENARIOS.includes(scenario as EdgeScenario))
    usage(`--scenario: "${scenario}" is not one of ${EDGE_SCENARIOS.join(', ')}`);
const fleet = /^(\d+)x(\d+)$/.exec(values.fleet ?? '');
if (!fleet) usage(`--fleet: expected WxS (e.g. 80x50), got "${values.fleet}"`);
const optional = (text: string | undefined) => (text === undefined ? undefined : Number(text));

assertBuilt();
const t0 = Date.now();
const series = await runEdgeDrills(scenarios as EdgeScenario[], Number(values.repeat), {
  workgroups: Number(fleet[1]),
  workspacesPerWorkgroup: Number(fleet[2]),
  latencyMs: Number(values['latency-ms']),
  transitionMs: Number(values['transition-ms']),
  outageS: Number(values['outage-s']),
  outageAfterS: Number(values['outage-after-s']),
  offMinutes: Number(values['off-minutes']),
  concurrency: optional(values.concurrency),
  lockMs: optional(values['lock-ms']),
  partSize: Number(values['part-size']),
  workerConcurrency: optional(values['worker-concurrency']),
  progress: (line) =>
    process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(7)} s] ${line}\n`),
});
if (values.json) process.stdout.write(`${JSON.stringify(series.reports, null, 2)}\n`);
else process.stdout.write(`\n${series.text}\n`);
process.exitCode = series.ok ? 0 : 1;
