import { ApiClient, ApiError } from '../../src/api/index.js';
import { DEFAULT_API_KEY, DEFAULT_BEARER_TOKEN, startSimulator } from '../../src/sim/index.js';
import { answer, type FuzzCase, fuzzResponse } from './bad-input-fuzz.js';
import { type RecordedRequest, startScriptedServer } from './scripted-server.js';

type Operation = (api: ApiClient) => Promise<unknown>;

/** The 15 operations, with ids that exist in the simulator's seeded 2×2 fleet (see `recordSeeds`). */
interface FleetIds {
  wg: string;
  ws: string;
  stoppedWs: string;
  stoppedWg: string;
  backup: string;
  db: string;
  cp: string;
  user: string;
}

function operations(ids: FleetIds): [string, Operation][] {
  return [
    ['restoreBackup', (c) => c.restoreBackup(ids.wg, ids.ws, ids.backup)],
    ['deleteBackup', (c) => c.deleteBackup(ids.wg, ids.ws, ids.backup)],
    [
      'createDbUser',
      (c) => c.createDbUser(ids.wg, ids.ws, { username: 'chaos_user', password: 'Chaos-pass-123!' }),
    ],
    [
      'updateDbUserPassword',
      (c) => c.updateDbUserPassword(ids.wg, ids.ws, { username: ids.user, password: 'Chaos-pass-456!' }),
    ],
    ['updateCloudProvider', (c) => c.updateCloudProvider(ids.cp, { name: 'chaos-renamed' })],
    ['getCloudProvider', (c) => c.getCloudProvider(ids.cp)],
    ['upgradeCloudProvider', (c) => c.upgradeCloudProvider(ids.cp, {})],
    ['listWorkgroups', (c) => c.listWorkgroups()],
    ['listAllowedIps', (c) => c.listAllowedIps(ids.wg)],
    ['checkCurrentIp', (c) => c.checkCurrentIp(ids.wg)],
    ['disableAllowList', (c) => c.disableAllowList(ids.wg)],
    ['listOrgUsers', (c) => c.listOrgUsers()],
    ['resumeWorkspace', (c) => c.resumeWorkspace(ids.stoppedWg, ids.stoppedWs)],
    ['pauseWorkspace', (c) => c.pauseWorkspace(ids.wg, ids.ws)],
    ['deleteDatabase', (c) => c.deleteDatabase(ids.wg, ids.db)],
  ];
}

/** A real answer of each operation, as the simulator gives it: what the mutations start from. */
export interface ResponseSeeds {
  ids: FleetIds;
  /** Operation name → { status, body } of a real answer. */
  bodies: Map<string, { status: number; body: string }>;
}

/**
 * Calls every operation once through a recording proxy in front of a simulator (2 workgroups ×
 * 2 workspaces, seed 1) and keeps each answer's status and body.
 */
export async function recordSeeds(): Promise<ResponseSeeds> {
  const sim = await startSimulator({
    port: 0,
    seed: 1,
    fleet: { workgroups: 2, workspacesPerWorkgroup: 3 },
    transitionMs: 10,
  });
  const proxy = await startScriptedServer();
  try {
    const state = sim.state;
    const active = state.workspaces.find((ws) => ws.status === 'Active') ?? state.workspaces[0];
    const stopped = state.workspaces.find((ws) => ws.status === 'Stopped') ?? state.workspaces[1];
    if (!active || !stopped) throw new Error('the seeded fleet has no workspace');
    const backup = state.backups.find((b) => b.workspace_id === active.workspace_id);
    const user = state.dbUsers.find((u) => u.workspace_id === active.workspace_id);
    const wg = state.workgroups.find((w) => w.workgroup_id === active.workgroup_id);
    const db = state.databases.find((d) => d.workgroup_id === active.workgroup_id && d.name === 'archive');
    const ids: FleetIds = {
      wg: active.workgroup_id,
      ws: active.workspace_id,
      stoppedWg: stopped.workgroup_id,
      stoppedWs: stopped.workspace_id,
      backup: backup?.backup_id ?? 'bk-none',
      db: db?.database_id ?? 'db-none',
      cp: wg?.cloud_provider_id ?? 'cp-none',
      user: user?.username ?? 'nobody',
    };
    let last = { status: 0, body: '' };
    proxy.reply((req, res) => {
      void fetch(sim.url + req.url, {
        method: req.method,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(
            ([k, v]) => typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k),
          ),
        ) as Record<string, string>,
        body: req.body === '' ? undefined : req.body,
      }).then(async (answer) => {
        last = { status: answer.status, body: await answer.text() };
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(last.body);
      });
    });
    const client = new ApiClient({
      baseUrl: proxy.url,
      apiKey: DEFAULT_API_KEY,
      bearerToken: DEFAULT_BEARER_TOKEN,
    });
    const bodies = new Map<string, { status: number; body: string }>();
    for (const [name, call] of operations(ids)) {
      await call(client).catch(() => undefined);
      bodies.set(name, last);
    }
    await client.close();
    return { ids, bodies };
  } finally {
    await proxy.close();
    await sim.close();
  }
}

export interface ResponseRoundReport {
  total: number;
  resolved: number;
  apiErrors: number;
  /** ApiError types seen, with counts. */
  types: Record<string, number>;
  failures: {
    index: number;
    operation: string;
    what: string;
    status: number;
    transport: string;
    why: string;
    body: string;
  }[];
  durationMs: number;
}

const CLIENT_TIMEOUT_MS = 3_000;

/** Runs `count` fuzzed answers through the real ApiClient, `lanes` at a time (one client each). */
export async function runResponseRound(count: number, seed: number, lanes = 8): Promise<ResponseRoundReport> {
  const seeds = await recordSeeds();
  const server = await startScriptedServer();
  const current = new Map<string, FuzzCase>();
  server.reply((req: RecordedRequest, res) => {
    const lane = /^\/(lane\d+)\//.exec(req.url)?.[1] ?? '';
    const fuzz = current.get(lane);
    if (!fuzz) {
      res.writeHead(500);
      res.end('no case');
      return;
    }
    answer(res, fuzz);
  });
  const byName = new Map(operations(seeds.ids));
  const report: ResponseRoundReport = {
    total: count,
    resolved: 0,
    apiErrors: 0,
    types: {},
    failures: [],
    durationMs: 0,
  };
  const began = performance.now();
  let next = 0;
  const run = async (lane: string) => {
    const client = new ApiClient({
      baseUrl: `${server.url}/${lane}`,
      apiKey: DEFAULT_API_KEY,
      bearerToken: DEFAULT_BEARER_TOKEN,
      timeoutMs: CLIENT_TIMEOUT_MS,
    });
    try {
      while (next < count) {
        const index = next++;
        const fuzz = fuzzResponse(seed, index, seeds);
        current.set(lane, fuzz);
        server.requests.length = 0;
        const started = performance.now();
        const call = byName.get(fuzz.operation) as Operation;
        const why = await call(client).then(
          () => {
            report.resolved++;
            return undefined;
          },
          (error: unknown) => {
            if (!(error instanceof ApiError)) {
              const e = error as Error;
              return `rejected with ${e?.name ?? typeof error}: ${String(e?.message ?? error).slice(0, 300)}`;
            }
            report.apiErrors++;
            report.types[error.type] = (report.types[error.type] ?? 0) + 1;
            if (typeof error.retryable !== 'boolean') return 'ApiError without a boolean retryable';
            if (error.operation !== fuzz.operation) return `ApiError names ${error.operation}`;
            const shown = `${error.message} ${JSON.stringify(error.toJSON())}`;
            if (shown.includes(DEFAULT_API_KEY) || shown.includes(DEFAULT_BEARER_TOKEN))
              return `a credential in the ApiError: ${error.message.slice(0, 300)}`;
            return undefined;
          },
        );
        const ms = performance.now() - started;
        const slow = ms > CLIENT_TIMEOUT_MS + 2_000 ? `took ${Math.round(ms)} ms` : undefined;
        if (why || slow)
          report.failures.push({
            index,
            operation: fuzz.operation,
            what: fuzz.what,
            status: fuzz.status,
            transport: fuzz.transport,
            why: why ?? (slow as string),
            body: (fuzz.raw ?? fuzz.body).toString('latin1').slice(0, 200),
          });
      }
    } finally {
      await client.close();
    }
  };
  try {
    await Promise.all(Array.from({ length: lanes }, (_, i) => run(`lane${i}`)));
  } finally {
    await server.close();
  }
  report.durationMs = performance.now() - began;
  return report;
}
