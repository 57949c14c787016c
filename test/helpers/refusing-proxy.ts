import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout } from 'node:timers/promises';
import { request } from 'undici';
import { failure } from '../../bench/harness/scripted-server.js';
import type { SimulatorHandle } from '../../src/sim/index.js';

/**
 * A refusal the proxy answers in the simulator's place: for the refusals the simulator never
 * gives (it refuses none of the allow-list operations of a listed workgroup, say) and for lost
 * answers, where the call goes through and the caller hears otherwise.
 */
export interface Refusal {
  method: string;
  path: string;
  status: number;
  type: string;
  /** Pass the call on first, then answer the refusal: the change is made, the answer says otherwise. */
  forwardFirst?: boolean;
  /**
   * With `forwardFirst`: hold the refusal until this holds (polled every few ms), so that what
   * the forwarded call started is over before the caller hears, whatever the timers' order.
   */
  answerWhen?: () => boolean;
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
  /**
   * The simulator as `runJob` sees it, reached through the proxy. Its `state` is a snapshot
   * taken when the proxy started: read the live state from the simulator's own handle.
   */
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
        if (refusal.forwardFirst) {
          await forward(method, url, req.headers, body);
          while (refusal.answerWhen && !refusal.answerWhen()) await setTimeout(5);
        }
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
