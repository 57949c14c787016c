/**
 * Throughput of the simulator on loopback, no injected faults: list allowed IPs (goal
 * ≥ 5,000 req/s on 2 cores) and list workgroups, on a seeded 20×5 fleet.
 *
 *   npx tsx bench/sim-throughput.ts [--duration 5] [--connections 50] [--in-process]
 *
 * By default the simulator runs in a child process: autocannon's own parsing and bookkeeping
 * would otherwise share one event loop with the server and halve what is measured. With
 * `--in-process` both share the loop, which shows the gap.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startSimulator } from '../src/sim/index.js';

interface Histogram {
  average: number;
  p50: number;
  p99: number;
}
interface AutocannonResult {
  requests: Histogram;
  latency: Histogram;
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
}) => Promise<AutocannonResult>;

// autocannon ships no types; the slice used here is declared above.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const API_KEY = 'bench-key';
const FLEET = { workgroups: 20, workspacesPerWorkgroup: 5 };

const { values } = parseArgs({
  options: {
    serve: { type: 'boolean', default: false },
    'in-process': { type: 'boolean', default: false },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
  },
});

async function serve(): Promise<void> {
  const sim = await startSimulator({ apiKey: API_KEY, fleet: FLEET, seed: 1, admin: true });
  process.stdout.write(`${JSON.stringify({ url: sim.url })}\n`);
  process.once('SIGTERM', () => void sim.close().then(() => process.exit(0)));
}

async function startChild(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--serve'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    const { url } = JSON.parse(line) as { url: string };
    return { url, child };
  }
  throw new Error('the simulator child exited before printing its URL');
}

async function bench(): Promise<void> {
  const inProcess = values['in-process'];
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  let url: string;
  let stop: () => Promise<void>;
  if (inProcess) {
    const sim = await startSimulator({ apiKey: API_KEY, fleet: FLEET, seed: 1 });
    url = sim.url;
    stop = () => sim.close();
  } else {
    const started = await startChild();
    url = started.url;
    stop = async () => {
      started.child.kill('SIGTERM');
    };
  }
  const state = (await (await fetch(`${url}/_sim/state`)).json()) as {
    workgroups: { workgroup_id: string }[];
  };
  const workgroupId = state.workgroups[0]?.workgroup_id;
  const targets = [
    { name: 'listAllowedIps', path: `/controller/v4/v2/workgroups/${workgroupId}/allow_list` },
    { name: 'listWorkgroups', path: '/controller/v4/v2/workgroups' },
  ];

  console.log(
    `simulator ${inProcess ? 'in-process' : 'in a child process'}, fleet 20x5, ${connections} connections, ${duration}s per route, node ${process.version}`,
  );
  console.log('route            req/s (avg)   p50 ms   p99 ms   non-2xx   errors');
  try {
    for (const target of targets) {
      // A short warm-up so the JIT and the render cache are hot before measuring.
      await autocannon({
        url: url + target.path,
        connections,
        duration: 1,
        headers: { 'x-api-key': API_KEY },
      });
      const result = await autocannon({
        url: url + target.path,
        connections,
        duration,
        headers: { 'x-api-key': API_KEY },
      });
      console.log(
        [
          target.name.padEnd(16),
          result.requests.average.toFixed(0).padStart(11),
          String(result.latency.p50).padStart(8),
          String(result.latency.p99).padStart(8),
          String(result.non2xx).padStart(9),
          String(result.errors + result.timeouts).padStart(8),
        ].join(' '),
      );
    }
  } finally {
    await stop();
  }
}

await (values.serve ? serve() : bench());
