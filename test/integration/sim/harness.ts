import { request } from 'undici';
import { afterEach } from 'vitest';
import { eventually } from '../../../bench/harness/eventually.js';
import {
  type SimState,
  type SimulatorHandle,
  type SimulatorOptions,
  startSimulator,
} from '../../../src/sim/index.js';

// the one polling helper of the tests and drills
export { eventually };

export const API_KEY = 'test-api-key';
export const BEARER_TOKEN = 'test-bearer-token';
export const V = '/controller/v4/v2';

const running = new Set<SimulatorHandle>();

/** Closes every simulator a test started, pass or fail. */
afterEach(async () => {
  await Promise.all([...running].map((sim) => sim.close()));
  running.clear();
});

export async function startSim(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const sim = await startSimulator({
    apiKey: API_KEY,
    bearerToken: BEARER_TOKEN,
    transitionMs: 80,
    ...options,
  });
  running.add(sim);
  return sim;
}

export interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response fields
  json: any;
}

export interface CallOptions {
  body?: unknown;
  /** `key` (default): x-api-key; `bearer`: Authorization; `none`; or explicit headers. */
  auth?: 'key' | 'bearer' | 'none';
  headers?: Record<string, string>;
}

/** One raw HTTP exchange, so tests see exactly what is on the wire. */
export async function call(
  sim: SimulatorHandle,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  options: CallOptions = {},
): Promise<WireResponse> {
  const auth = options.auth ?? 'key';
  const headers: Record<string, string> = {
    ...(auth === 'key' ? { 'x-api-key': API_KEY } : {}),
    ...(auth === 'bearer' ? { authorization: `Bearer ${BEARER_TOKEN}` } : {}),
    ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...options.headers,
  };
  const response = await request(`${sim.url}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

export const paths = {
  workgroups: () => `${V}/workgroups`,
  allowList: (wg: string) => `${V}/workgroups/${wg}/allow_list`,
  currentIp: (wg: string) => `${V}/workgroups/${wg}/allow_list/current`,
  disableAllowList: (wg: string) => `${V}/workgroups/${wg}/allow_list/disable`,
  restore: (wg: string, ws: string) => `${V}/workgroups/${wg}/workspaces/${ws}/backups/restore`,
  backups: (wg: string, ws: string) => `${V}/workgroups/${wg}/workspaces/${ws}/backups`,
  dbUser: (wg: string, ws: string) => `${V}/workgroups/${wg}/workspaces/${ws}/dbuser`,
  pause: (wg: string, ws: string) => `${V}/workgroups/${wg}/workspaces/${ws}/pause`,
  resume: (wg: string, ws: string) => `${V}/workgroups/${wg}/workspaces/${ws}/resume`,
  database: (wg: string, db: string) => `${V}/workgroups/${wg}/databases/${db}`,
  cloudProvider: (cp: string) => `${V}/cloud-providers/${cp}`,
  upgrade: (cp: string) => `${V}/cloud-providers/${cp}/upgrade`,
  users: () => '/users',
};

export function workspaceWithStatus(state: SimState, status: string) {
  const ws = state.workspaces.find((candidate) => candidate.status === status);
  if (!ws) throw new Error(`the seeded state has no ${status} workspace`);
  return ws;
}

/** A workspace's first backup and a database no workspace uses, from the seeded state. */
export function backupOf(state: SimState, workspaceId: string) {
  const backup = state.backups.find((candidate) => candidate.workspace_id === workspaceId);
  if (!backup) throw new Error(`no backup for ${workspaceId}`);
  return backup;
}

export function emptyDatabase(state: SimState) {
  const db = state.databases.find(
    (candidate) => !state.workspaces.some((ws) => ws.database_id === candidate.database_id),
  );
  if (!db) throw new Error('the seeded state has no empty database');
  return db;
}

/** A workspace's status as list workgroups shows it: what a client sees. */
export async function listedStatus(sim: SimulatorHandle, workspaceId: string): Promise<string | undefined> {
  const { json } = await call(sim, 'GET', paths.workgroups());
  for (const wg of json.Result) {
    for (const ws of wg.workspaces) if (ws.workspace_id === workspaceId) return ws.status;
  }
  return undefined;
}
