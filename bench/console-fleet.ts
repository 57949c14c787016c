/**
 * The console's fleet view at scale: a stored listing of N workspaces (default 100 workgroups ×
 * 100 = 10,000, listed once from the simulator as a run lists them), a third of them paused and
 * owned by a window, a few holds, a window over all of them; then `/api/fleet` and the `/fleet`
 * page asked `--requests` times each, one at a time, through the ops server as `nightshift start`
 * serves it. Prints latency percentiles, answer sizes and the Redis commands one view costs.
 * A page view calls no API: the simulator is stopped before the first request.
 *
 *   npx tsx bench/console-fleet.ts [--workgroups 100] [--per-workgroup 100] [--requests 200]
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { actionRegistry } from '../jobs/index.js';
import { ApiClient, type Workgroup } from '../src/api/index.js';
import { Metrics, startOpsServer } from '../src/ops/index.js';
import { checkPolicy } from '../src/policy/index.js';
import { DEFAULT_API_KEY, seedState, startSimulator } from '../src/sim/index.js';
import {
  AuditTrail,
  createRedis,
  FindingsLedger,
  fleetStateStores,
  PolicyStore,
  RedisFleetListings,
  type RedisFleetState,
  RunHistory,
  Suspensions,
  startLocalRedis,
  WorkspaceHistory,
} from '../src/store/index.js';
import { harnessKeyring } from './harness/policy-key.js';

const { values } = parseArgs({
  options: {
    workgroups: { type: 'string', default: '100' },
    'per-workgroup': { type: 'string', default: '100' },
    requests: { type: 'string', default: '200' },
  },
});
const fleet = {
  workgroups: Number(values.workgroups),
  workspacesPerWorkgroup: Number(values['per-workgroup']),
};
const requests = Number(values.requests);
const prefix = 'bench-console';

const POLICY = `version: 1
pricing:
  currency: EUR
  perHour: { TG-4: 0.45, TG-8: 0.90, TG-16: 1.80, TG-32: 3.60 }
windows:
  office-hours:
    target: { workgroups: ["*"] }
    uptime: "Mon-Fri 08:00-18:00"
    timezone: Europe/Berlin
    maxTargets: "100%"
`;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** The fleet as a run lists it, from a simulator stopped right after: a page view calls no API. */
async function listFleet(): Promise<Workgroup[]> {
  const sim = await startSimulator({
    port: 0,
    apiKey: DEFAULT_API_KEY,
    state: seedState({ seed: 7, fleet }),
  });
  const listed = await new ApiClient({ baseUrl: sim.url, apiKey: DEFAULT_API_KEY }).listWorkgroups();
  await sim.close();
  return listed.result;
}

/** A third of the fleet paused and owned by the window, as an hour into its off period. */
async function ownEveryThird(state: RedisFleetState, workgroups: Workgroup[]): Promise<void> {
  let n = 0;
  for (const wg of workgroups)
    for (const ws of wg.workspaces ?? []) {
      if (n++ % 3 !== 0) continue;
      await state.ledger.put({
        key: `${wg.workgroup_id}/${ws.workspace_id}`,
        workgroupId: wg.workgroup_id as string,
        workspaceId: ws.workspace_id as string,
        workgroupName: wg.name ?? undefined,
        workspaceName: ws.name ?? undefined,
        owner: 'office-hours',
        ownerKind: 'window',
        runId: 'bench-run',
        state: 'confirmed',
        intendedAt: new Date(Date.now() - 3_600_000).toISOString(),
        pausedAt: new Date(Date.now() - 3_600_000).toISOString(),
        pricePerHour: 0.9,
        currency: 'EUR',
      });
    }
}

async function placeHolds(state: RedisFleetState, workgroups: Workgroup[]): Promise<void> {
  for (const [i, wg] of workgroups.slice(0, 5).entries())
    await state.holds.place({
      pattern: `${wg.name}/*`,
      state: i % 2 === 0 ? 'active' : 'stopped',
      until: new Date(Date.now() + 86_400_000).toISOString(),
      reason: 'bench',
      by: 'bench',
      createdAt: new Date(Date.now() - i * 1000).toISOString(),
    });
}

function startConsole(
  redis: Redis,
  stores: { state: RedisFleetState; policies: PolicyStore; listings: RedisFleetListings },
) {
  return startOpsServer({
    port: 0,
    redis,
    metrics: new Metrics({ processMetrics: false }),
    console: {
      sources: {
        history: new RunHistory(redis, { prefix }),
        policies: stores.policies,
        suspensions: new Suspensions(redis, { prefix }),
        state: stores.state,
        listings: stores.listings,
        findings: new FindingsLedger(redis, { prefix }),
        timeline: new WorkspaceHistory(redis, { prefix }),
        audit: new AuditTrail(redis, { prefix }),
        inProgress: async () => undefined,
        underWay: async () => [],
        readPolicy: (text, sha) =>
          checkPolicy(text, sha, { registry: actionRegistry, env: {}, unsetVariables: 'warning' }).policy ??
          'unreadable',
      },
    },
  });
}

/** Counts the commands Redis serves, through MONITOR on a connection of its own. */
async function watchCommands(redis: Redis): Promise<{ count: () => number; stop: () => void }> {
  const monitor = redis.duplicate();
  let commands = 0;
  const watcher = await monitor.monitor();
  watcher.on('monitor', () => {
    commands += 1;
  });
  return {
    count: () => commands,
    stop: () => {
      watcher.disconnect();
      monitor.disconnect();
    },
  };
}

/** Asks for `path` `requests` times, one at a time, and prints its latencies, size and Redis commands. */
async function timeView(url: string, path: string, commands: () => number): Promise<void> {
  const first = await fetch(`${url}${path}`);
  const bytes = (await first.arrayBuffer()).byteLength;
  const times: number[] = [];
  const before = commands();
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    const response = await fetch(`${url}${path}`);
    await response.arrayBuffer();
    times.push(performance.now() - started);
  }
  // MONITOR lines arrive after the replies: let the last ones in
  await new Promise((resolve) => setTimeout(resolve, 200));
  times.sort((a, b) => a - b);
  const perView = (commands() - before) / requests;
  process.stdout.write(
    `${path.padEnd(26)} ${requests} requests: p50 ${percentile(times, 50).toFixed(1)} ms, p90 ${percentile(times, 90).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms, max ${(times.at(-1) ?? 0).toFixed(1)} ms; ${(bytes / 1024).toFixed(0)} KiB; ${perView.toFixed(1)} Redis commands per view\n`,
  );
}

async function main(): Promise<void> {
  const redisServer = await startLocalRedis({ appendOnly: false });
  const redis = createRedis({ url: redisServer.url, role: 'bench' });
  const workgroups = await listFleet();
  const total = workgroups.reduce((sum, wg) => sum + (wg.workspaces?.length ?? 0), 0);

  const state = fleetStateStores(redis, prefix);
  const listings = new RedisFleetListings(redis, { prefix });
  const policies = new PolicyStore(redis, { prefix, keyring: harnessKeyring() });
  await policies.setCurrent(await policies.put(POLICY));
  const saveStarted = performance.now();
  await listings.save({ at: new Date().toISOString(), runId: 'bench-run', job: 'office-hours', workgroups });
  const saveMs = performance.now() - saveStarted;
  await ownEveryThird(state, workgroups);
  await placeHolds(state, workgroups);

  const server = await startConsole(redis, { state, policies, listings });
  const commands = await watchCommands(redis);
  for (const path of ['/api/fleet', '/fleet', '/api/fleet?state=Stopped'])
    await timeView(server.url, path, commands.count);
  process.stdout.write(
    `fleet: ${total} workspaces in ${workgroups.length} workgroups; listing saved in ${saveMs.toFixed(0)} ms; ` +
      `${cpus().length} cores, load ${loadavg()[0]?.toFixed(2)}\n`,
  );
  commands.stop();
  await server.close();
  redis.disconnect();
  await redisServer.stop();
}

await main();
