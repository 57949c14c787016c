/**
 * The client's cost over a raw undici request: list-workgroups with 1,000 workgroups of 10
 * workspaces each, served on loopback from a worker thread (so the server has its own core).
 * Prints the median time of each and their ratio. Goal: under 1.3×.
 *
 *   npx tsx bench/client-overhead.ts [--iterations 40]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { ApiClient } from '../src/api/index.js';

const WORKGROUPS = 1000;
const WORKSPACES = 10;

function workspace(g: number, s: number) {
  return {
    workspace_id: `ws-${g}-${s}`,
    name: `ws-${s}`,
    workgroup_id: `wg-${g}`,
    workgroup_name: `group-${g}`,
    database_id: `db-${g}`,
    database_name: `db-${g}`,
    cloud_provider_id: `cp-${g}`,
    cloud_provider_name: `byoc-${g}`,
    org_id: 'org-1',
    org_name: 'Example Org',
    region: 'eu-central-1',
    creator: 'ops@example.com',
    created_at: '2026-01-01T00:00:00Z',
    last_modified_time: '2026-11-01T00:00:00Z',
    status: s % 3 === 0 ? 'Stopped' : 'Active',
    display_status: s % 3 === 0 ? 'Stopped' : 'Active',
    condition_type: 'Ready',
    svc_version: '4.2.0',
    auto_stop_minutes: 60,
    enable_auto_start: true,
    enable_ha: false,
    is_rw: true,
    replicas: 1,
    vertex_count: 1_000_000 + s,
    edge_count: 5_000_000 + s,
    graph_topology_size_bytes: 123_456_789,
    folder_statistics: { backup_size: 1, billed_size: 2, log_size: 3, vector_size: 4, total_size: 10 },
    maintenance_window_day_of_week: 6,
    maintenance_window_hour_of_day: 3,
    gateway_host: `ws-${g}-${s}.example.net`,
    version_number: 7,
    agent_config: { heartbeat_interval_seconds: 30, enable_topology_force_update: false },
    addons: [{ addons_id: 'copilot', enable: false }],
    workspace_type: { cpu: '4', memory: '16Gi', ha: 1, partition: 1, typeName: 'TG-00' },
  };
}

function fleetBody(): string {
  const result = Array.from({ length: WORKGROUPS }, (_, g) => ({
    workgroup_id: `wg-${g}`,
    name: `group-${g}`,
    cloud_provider_id: `cp-${g}`,
    enable_allow_list: true,
    platform: 'cloud_a',
    region: 'eu-central-1',
    svc_databases: [{ database_id: `db-${g}`, name: `db-${g}`, workgroup_id: `wg-${g}` }],
    workspaces: Array.from({ length: WORKSPACES }, (_, s) => workspace(g, s)),
  }));
  return JSON.stringify({
    Error: false,
    ErrorDetails: [],
    Message: 'ok',
    RequestID: 'bench',
    Result: result,
  });
}

function serve(): void {
  const body = fleetBody();
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port, bytes: Buffer.byteLength(body) });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function measure(): Promise<void> {
  const iterations = Number(process.argv[process.argv.indexOf('--iterations') + 1]) || 40;
  const server = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'] });
  const [{ port, bytes }] = (await once(server, 'message')) as [{ port: number; bytes: number }];
  const baseUrl = `http://127.0.0.1:${port}`;
  const url = `${baseUrl}/controller/v4/v2/workgroups`;
  const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
  const client = new ApiClient({ baseUrl, apiKey: 'bench-key', dispatcher });

  const raw = async () => {
    const res = await request(url, { headers: { 'x-api-key': 'bench-key' }, dispatcher });
    const json = (await res.body.json()) as { Result: unknown[] };
    if (json.Result.length !== WORKGROUPS) throw new Error('short body');
  };
  const typed = async () => {
    const { result } = await client.listWorkgroups();
    if (result.length !== WORKGROUPS) throw new Error('short body');
  };

  for (let i = 0; i < 5; i++) {
    await raw();
    await typed();
  }
  const rawTimes: number[] = [];
  const clientTimes: number[] = [];
  for (let i = 0; i < iterations; i++) {
    for (const [fn, times] of i % 2 === 0
      ? ([
          [raw, rawTimes],
          [typed, clientTimes],
        ] as const)
      : ([
          [typed, clientTimes],
          [raw, rawTimes],
        ] as const)) {
      const started = performance.now();
      await fn();
      times.push(performance.now() - started);
    }
  }
  const rawMs = median(rawTimes);
  const clientMs = median(clientTimes);
  process.stdout.write(
    `${[
      `client overhead: list-workgroups, ${WORKGROUPS}×${WORKSPACES} fleet, ${(bytes / 1e6).toFixed(1)} MB body, ${iterations} iterations`,
      `  raw undici request + JSON.parse   median ${rawMs.toFixed(1)} ms`,
      `  ApiClient.listWorkgroups          median ${clientMs.toFixed(1)} ms`,
      `  ratio                             ${(clientMs / rawMs).toFixed(2)}× (goal < 1.30×)`,
    ].join('\n')}\n`,
  );
  await dispatcher.close();
  server.kill();
}

if (process.argv.includes('--serve')) {
  serve();
} else {
  await measure();
}
