import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type LocalRedis, RedisPortTakenError, startLocalRedis } from '../../../src/store/local-server.js';
import { createRedis } from '../../../src/store/redis.js';

const started: LocalRedis[] = [];
const listeners: Server[] = [];

afterEach(async () => {
  for (const server of started.splice(0)) await server.stop();
  for (const listener of listeners.splice(0)) listener.close();
});

/** An HTTP server on a port of its own: a process that took the port a Redis was meant for. */
async function httpListener(): Promise<number> {
  const listener = createServer((_request, response) => response.end('not redis'));
  listeners.push(listener);
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  return (listener.address() as { port: number }).port;
}

describe('a local redis-server', () => {
  it('answers on its URL as that very process, and again after a restart', async () => {
    const server = await startLocalRedis({ appendOnly: false });
    started.push(server);
    const redis = createRedis({ url: server.url, role: 'test' });
    try {
      const processId = async () => /^process_id:(\d+)/m.exec(await redis.info('server'))?.[1];
      const before = await processId();
      await server.restart();
      const after = await processId();
      expect(before).toMatch(/^\d+$/);
      expect(after).toMatch(/^\d+$/);
      expect(after).not.toBe(before);
    } finally {
      redis.disconnect();
    }
  });

  it('refuses a port another process answers on, naming it, instead of handing out a URL whose every command would hang', async () => {
    const port = await httpListener();
    const startedAt = Date.now();
    const attempt = startLocalRedis({ port, appendOnly: false });
    attempt.then((server) => started.push(server)).catch(() => undefined);
    await expect(attempt).rejects.toThrow(RedisPortTakenError);
    await expect(attempt).rejects.toThrow(`127.0.0.1:${port} is taken by another process`);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
  });

  it('refuses a port another Redis answers on: its clients would share that Redis and lose it with it', async () => {
    const other = await startLocalRedis({ appendOnly: false });
    started.push(other);
    const attempt = startLocalRedis({ port: other.port, appendOnly: false });
    attempt.then((server) => started.push(server)).catch(() => undefined);
    await expect(attempt).rejects.toThrow(RedisPortTakenError);
  });
});
