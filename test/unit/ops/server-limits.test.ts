import { connect, type Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { OPS_SERVER_LIMITS, type OpsServerLimits } from '../../../src/ops/hardening.js';
import { Metrics, type OpsServer, startOpsServer } from '../../../src/ops/index.js';

/** A Redis that never connected: nothing here needs one to answer. */
const redis = { status: 'wait' } as unknown as Redis;

const servers: OpsServer[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(limits: Partial<OpsServerLimits> = {}): Promise<OpsServer> {
  const server = await startOpsServer({
    host: '127.0.0.1',
    port: 0,
    redis,
    metrics: new Metrics({ processMetrics: false }),
    limits,
  });
  servers.push(server);
  return server;
}

/** A raw connection to the server, with what it received and when the server closed it. */
interface Probe {
  socket: Socket;
  received: () => string;
  /** Milliseconds from the connection to the server closing it. */
  closed: Promise<number>;
}

async function open(server: OpsServer): Promise<Probe> {
  const socket = connect(server.port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const connected = performance.now();
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  // a reset is a close too: the server may cut a socket that is still writing
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => resolve(performance.now() - connected)),
  );
  return { socket, received: () => text, closed };
}

/** Sends `text` a byte at a time, `everyMs` apart, until the socket closes. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let index = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || socket.writableEnded) return clearInterval(timer);
    socket.write(text[index % text.length] as string);
    index++;
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

const SLOW_HEADERS = `GET /healthz HTTP/1.1\r\nHost: ops\r\nX-Slow: ${'a'.repeat(10_000)}`;

describe('the ops server does not let a client hold a socket', () => {
  it('with its default limits, cuts a slowloris (headers a byte every 200 ms) with 408 within 10 s and the 1 s check', async () => {
    const server = await serve();
    const probe = await open(server);
    trickle(probe.socket, SLOW_HEADERS, 200);
    const closedAfter = await probe.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(OPS_SERVER_LIMITS.headersTimeoutMs - 100);
    expect(closedAfter).toBeLessThan(OPS_SERVER_LIMITS.headersTimeoutMs + 1_500);
    expect(probe.received()).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);

  it('closes a connection that never sends a byte within the header timeout', async () => {
    const server = await serve({ headersTimeoutMs: 400, requestTimeoutMs: 800, idleTimeoutMs: 5_000 });
    const probe = await open(server);
    const closedAfter = await probe.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(350);
    expect(closedAfter).toBeLessThan(1_500);
  });

  it('closes a request whose body never completes within the request timeout', async () => {
    const server = await serve({ headersTimeoutMs: 400, requestTimeoutMs: 900, idleTimeoutMs: 5_000 });
    const probe = await open(server);
    probe.socket.write('POST /healthz HTTP/1.1\r\nHost: ops\r\nContent-Length: 100000\r\n\r\n');
    trickle(probe.socket, 'x', 50);
    const closedAfter = await probe.closed;
    // answered at once (no route takes a body), then cut when the request has not ended in time
    expect(probe.received()).toMatch(/^HTTP\/1\.1 404 /);
    expect(closedAfter).toBeGreaterThanOrEqual(850);
    expect(closedAfter).toBeLessThan(2_000);
  });

  it('closes a kept-alive connection idle after its answer within the keep-alive timeout', async () => {
    const server = await serve({ keepAliveTimeoutMs: 300 });
    const probe = await open(server);
    probe.socket.write('GET /healthz HTTP/1.1\r\nHost: ops\r\n\r\n');
    const closedAfter = await probe.closed;
    expect(probe.received()).toMatch(/^HTTP\/1\.1 200 /);
    // Node waits a second beyond keepAliveTimeout (its keepAliveTimeoutBuffer) before it closes
    expect(closedAfter).toBeLessThan(2_500);
  });

  it('closes a connection beyond the limit as it arrives, and serves one again once a slot is free', async () => {
    const server = await serve({ maxConnections: 3 });
    const held = [await open(server), await open(server), await open(server)];
    const extra = await open(server);
    expect(await extra.closed).toBeLessThan(1_000);
    expect(extra.received()).toBe('');
    held[0]?.socket.destroy();
    await held[0]?.closed;
    const answered = await eventuallyAnswered(server);
    expect(answered).toBe(200);
  });
});

/** A GET of /healthz once the server has noticed a freed slot (a close reaches it a moment later). */
async function eventuallyAnswered(server: OpsServer): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const status = await fetch(`${server.url}/healthz`).then(
      (response) => response.status,
      () => undefined,
    );
    if (status !== undefined) return status;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no answer once a slot was free');
}
