import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { type SimState, type SimulatorHandle, seedState } from '../../../src/sim/index.js';
import { failure } from '../../helpers/scripted-server.js';

/**
 * A refusal the proxy answers in the simulator's place. The simulator refuses none of the
 * allow-list operations of a listed workgroup, so tests that need a refusal script it here.
 */
export interface Refusal {
  method: string;
  path: string;
  status: number;
  type: string;
  /** Pass the call on first, then answer the refusal: the change is made, the answer says otherwise. */
  forwardFirst?: boolean;
  /** How many matching calls to refuse; the later ones pass. Default: all. */
  times?: number;
}

export interface ProxyCall {
  method: string;
  path: string;
  status: number;
}

/** An HTTP proxy in front of the simulator that answers scripted refusals and passes the rest on. */
export interface RefusingProxy {
  /** The simulator as a test's `runJob` sees it, reached through the proxy. */
  sim: SimulatorHandle;
  /** Every call the proxy answered, in order. */
  calls: ProxyCall[];
  refuse(refusal: Refusal): void;
  /** Forgets the refusals and the calls. */
  reset(): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

function forwardable(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

export async function startRefusingProxy(sim: SimulatorHandle): Promise<RefusingProxy> {
  const refusals: Array<Refusal & { left: number }> = [];
  const calls: ProxyCall[] = [];

  const forward = async (method: string, url: string, headers: IncomingHttpHeaders, body: Buffer) => {
    const answer = await request(sim.url + url, {
      method: method as 'GET',
      headers: forwardable(headers),
      body: body.length > 0 ? body : undefined,
    });
    return {
      status: answer.statusCode,
      headers: answer.headers,
      body: Buffer.from(await answer.body.arrayBuffer()),
    };
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      const body = Buffer.concat(chunks);
      const refusal = refusals.find((r) => r.left > 0 && r.method === method && r.path === url);
      if (refusal) {
        refusal.left--;
        if (refusal.forwardFirst) await forward(method, url, req.headers, body);
        calls.push({ method, path: url, status: refusal.status });
        res.writeHead(refusal.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(failure(refusal.type, `scripted ${refusal.type}`, `proxy-${calls.length}`)));
        return;
      }
      const answer = await forward(method, url, req.headers, body);
      calls.push({ method, path: url, status: answer.status });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (typeof value === 'string' && !HOP_BY_HOP.has(name)) headers[name] = value;
      }
      res.writeHead(answer.status, headers);
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    sim: { ...sim, url: `http://127.0.0.1:${port}` },
    calls,
    refuse(refusal) {
      refusals.push({ ...refusal, left: refusal.times ?? Number.POSITIVE_INFINITY });
    },
    reset() {
      refusals.length = 0;
      calls.length = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export interface GroupSpec {
  enabled: boolean;
  /** `[cidr, note]`; a missing note leaves the entry without one. */
  entries: ReadonlyArray<readonly [string, string?]>;
}

/**
 * A seeded fleet whose workgroups (named prod-core, dev-alpha, staging-eu, … in order) carry
 * the given allow lists. The caller of every test is 127.0.0.1: `127.0.0.1/32` admits it.
 */
export function allowListState(groups: readonly GroupSpec[]): SimState {
  const state = seedState({ seed: 11, fleet: { workgroups: groups.length, workspacesPerWorkgroup: 1 } });
  state.workgroups.forEach((workgroup, g) => {
    const spec = groups[g] as GroupSpec;
    workgroup.enable_allow_list = spec.enabled;
    workgroup.allow_list = spec.entries.map(([cidr, note], e) => ({
      cidr,
      id: `al-${g}-${e}`,
      ...(note === undefined ? {} : { note }),
    }));
  });
  return state;
}

export function allowListPath(workgroupId: string, suffix = ''): string {
  return `/controller/v4/v2/workgroups/${workgroupId}/allow_list${suffix}`;
}
