/**
 * The hand-written baseline bench/fleet-pause.ts measures nightshift against: a BullMQ Worker and
 * an undici Pool, nothing else (no policy, no checkpoints, no run history, no logs, no retries,
 * no progress). A job lists the fleet, keeps the Active workspaces of the workgroups whose name
 * starts with one of `data.prefixes`, and pauses them `data.concurrency` at a time. Spawned by
 * fleet-pause.ts (run-all.ts skips it): it is a worker, not a benchmark.
 *
 * Environment: REDIS_URL, BENCH_PREFIX (BullMQ key prefix), API_URL, API_KEY.
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Pool } from 'undici';

/** The queue fleet-pause.ts puts baseline jobs on. */
const QUEUE = 'fleet-baseline';

interface BaselineJob {
  prefixes: string[];
  concurrency: number;
}
interface Workgroup {
  workgroup_id: string;
  name: string;
  workspaces: { workspace_id: string; status: string }[];
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`fleet-baseline-worker: ${name} is required`);
  return value;
}

const apiKey = required('API_KEY');
const pool = new Pool(required('API_URL'), { connections: 256, keepAliveTimeout: 30_000 });

async function call<T>(method: 'GET' | 'POST', path: string): Promise<T> {
  const res = await pool.request({ method, path, headers: { 'x-api-key': apiKey } });
  const body = (await res.body.json()) as { Error: boolean; Message: string; Result: T };
  if (res.statusCode !== 200 || body.Error)
    throw new Error(`${method} ${path}: ${res.statusCode} ${body.Message}`);
  return body.Result;
}

const worker = new Worker<BaselineJob, { paused: number }>(
  QUEUE,
  async (job) => {
    const { prefixes, concurrency } = job.data;
    const fleet = await call<Workgroup[]>('GET', '/controller/v4/v2/workgroups');
    const paths = fleet
      .filter((wg) => prefixes.some((prefix) => wg.name.startsWith(prefix)))
      .flatMap((wg) =>
        wg.workspaces
          .filter((ws) => ws.status === 'Active')
          .map((ws) => `/controller/v4/v2/workgroups/${wg.workgroup_id}/workspaces/${ws.workspace_id}/pause`),
      );
    let next = 0;
    const lane = async () => {
      while (next < paths.length) await call('POST', paths[next++] as string);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, paths.length) }, lane));
    return { paused: paths.length };
  },
  {
    connection: new Redis(required('REDIS_URL'), { maxRetriesPerRequest: null }),
    prefix: required('BENCH_PREFIX'),
    concurrency: 1,
  },
);
worker.on('failed', (job, error) =>
  process.stderr.write(`baseline job ${job?.id} failed: ${error.message}\n`),
);
process.once('SIGTERM', () => void worker.close().then(() => pool.close().then(() => process.exit(0))));
