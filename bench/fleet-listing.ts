/**
 * The fleet listing a run leaves for the console: a 10,000-workspace listing (default 100
 * workgroups × 100, the simulator's seed, listed through the client as a run lists it), trimmed as
 * a run trims it and saved through `RedisFleetListings` on a private redis-server. Prints the
 * API's answer and the kept body in bytes, Redis's `MEMORY USAGE` of the key, and over `--repeat`
 * rounds the time of a save of a changed fleet (written), of a save of the fleet already kept
 * (digest compared, nothing written), of `latestAt()` (the reader's change check) and of `latest()`
 * (read, JSON.parse and schema parse), p50 and p99.
 *
 *   npx tsx bench/fleet-listing.ts [--workgroups 100] [--per-workgroup 100] [--repeat 50]
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ApiClient } from '../src/api/index.js';
import { FleetListingSchema, trimListing } from '../src/engine/index.js';
import { seedState, startSimulator } from '../src/sim/index.js';
import { RedisFleetListings } from '../src/store/fleet-listing.js';
import { redisKeys } from '../src/store/keys.js';
import { startLocalRedis } from '../src/store/local-server.js';
import { createRedis } from '../src/store/redis.js';

const { values } = parseArgs({
  options: {
    workgroups: { type: 'string', default: '100' },
    'per-workgroup': { type: 'string', default: '100' },
    repeat: { type: 'string', default: '50' },
  },
});
const repeat = Number(values.repeat);
const fleet = {
  workgroups: Number(values.workgroups),
  workspacesPerWorkgroup: Number(values['per-workgroup']),
};

/** The `q` quantile of `samples` (ms), one decimal. */
function quantile(samples: readonly number[], q: number): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0).toFixed(1);
}

async function timed(times: number[], work: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  await work();
  times.push(performance.now() - start);
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

const sim = await startSimulator({ port: 0, apiKey: 'bench-key', state: seedState({ seed: 7, fleet }) });
const redisServer = await startLocalRedis({ appendOnly: false });
const redis = createRedis({ url: redisServer.url, role: 'bench' });
const api = new ApiClient({ baseUrl: sim.url, apiKey: 'bench-key', timeoutMs: 60_000 });
try {
  const { result: workgroups } = await api.listWorkgroups();
  const workspaces = workgroups.reduce((sum, wg) => sum + (wg.workspaces?.length ?? 0), 0);
  const prefix = 'bench';
  const listings = new RedisFleetListings(redis, { prefix });
  const listing = { at: '', runId: 'bench@1', job: 'bench', workgroups: trimListing(workgroups) };
  const save: number[] = [];
  const same: number[] = [];
  const changed: number[] = [];
  const read: number[] = [];
  const parse: number[] = [];
  const base = Date.now();
  for (let round = 0; round < repeat; round++) {
    // one workspace changes each round, so the save replaces the body as a newer run's would
    const first = listing.workgroups[0]?.workspaces?.[0];
    if (first) first.status = round % 2 === 0 ? 'Stopped' : 'Active';
    await timed(save, () => listings.save({ ...listing, at: new Date(base + 2 * round).toISOString() }));
    // the same fleet a moment later: compared, not written
    await timed(same, () => listings.save({ ...listing, at: new Date(base + 2 * round + 1).toISOString() }));
    await timed(changed, () => listings.latestAt());
    await timed(read, () => listings.latest());
  }
  const body = (await redis.hget(redisKeys(prefix).fleetListing, 'body')) ?? '';
  for (let round = 0; round < repeat; round++) {
    await timed(parse, async () => FleetListingSchema.parse(JSON.parse(body)));
  }
  const memory = Number(await redis.call('MEMORY', 'USAGE', redisKeys(prefix).fleetListing));
  console.log(`fleet: ${workgroups.length} workgroups, ${workspaces} workspaces; ${repeat} rounds`);
  console.log(`machine: ${cpus().length} cores, load ${loadavg()[0]?.toFixed(2)}, node ${process.version}`);
  console.log(`API answer (JSON):        ${kib(Buffer.byteLength(JSON.stringify(workgroups)))}`);
  console.log(`kept body (JSON):         ${kib(Buffer.byteLength(body))}`);
  console.log(`Redis MEMORY USAGE (key): ${kib(memory)}`);
  console.log('                              p50 ms   p99 ms');
  for (const [name, times] of [
    ['save, fleet changed (written)', save],
    ['save, same fleet (no write)', same],
    ['latestAt()', changed],
    ['latest() (read + parse)', read],
    ['  of which parse', parse],
  ] as const)
    console.log(
      `${name.padEnd(30)}${quantile(times, 0.5).padStart(6)}   ${quantile(times, 0.99).padStart(6)}`,
    );
} finally {
  await api.close();
  redis.disconnect();
  await redisServer.stop();
  await sim.close();
}
