import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { freePort } from '../../../src/store/local-server.js';
import {
  createRedis,
  MAX_RECONNECT_DELAY_MS,
  pingRedis,
  RedisUrlError,
  reconnectDelay,
  safeRedisUrl,
} from '../../../src/store/redis.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A real pino logger (with the production redaction) writing parsed lines to an array. */
function captureLogger() {
  const lines: LogLine[] = [];
  const log = createLogger({
    level: 'debug',
    destination: { write: (line) => lines.push(JSON.parse(line)) },
  });
  return { log, lines, at: (level: number) => lines.filter((line) => line.level === level) };
}
const WARN = 40;
const INFO = 30;

let server: TestRedis;
const clients: Redis[] = [];
let killed = false;

/** Kills the server; afterEach brings it back even if the test fails before it does. */
async function killServer(): Promise<void> {
  killed = true;
  await server.kill();
}

async function restartServer(): Promise<void> {
  await server.restart();
  killed = false;
}

beforeAll(async () => {
  server = await startTestRedis();
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  vi.restoreAllMocks();
  if (killed) await restartServer();
});

afterAll(async () => {
  await server.stop();
});

function connect(options: Partial<Parameters<typeof createRedis>[0]> = {}): Redis {
  const client = createRedis({ url: server.url, role: 'worker', ...options });
  clients.push(client);
  return client;
}

describe('createRedis through an outage', () => {
  it('logs one warning per outage, however many reconnects fail, one info when back, and handles every error event', async () => {
    const unhandled = vi.spyOn(console, 'error');
    const { log, at } = captureLogger();
    const redis = connect({ log });
    await redis.set('before', '1');
    let attempts = 0;
    redis.on('reconnecting', () => attempts++);

    await killServer();
    // A command sent during the outage waits in the offline queue instead of failing.
    const queued = redis.incr('during');
    await vi.waitFor(() => expect(attempts).toBeGreaterThanOrEqual(3), { timeout: 5_000 });
    expect(at(WARN)).toHaveLength(1);
    expect(at(WARN)[0]).toMatchObject({
      msg: 'Redis unreachable; retrying',
      redis: server.url,
      client: 'worker',
      code: expect.stringMatching(/^(ECONNREFUSED|ECONNRESET)$/),
    });
    expect(at(INFO)).toHaveLength(0);

    await restartServer();
    await vi.waitFor(() => expect(at(INFO)).toHaveLength(1), { timeout: 10_000 });
    expect(at(INFO)[0]).toMatchObject({
      msg: 'Redis connection restored',
      redis: server.url,
      client: 'worker',
    });
    await expect(queued).resolves.toBe(1);
    await expect(redis.get('before')).resolves.toBeTypeOf('string');
    expect(at(WARN)).toHaveLength(1);
    expect(unhandled).not.toHaveBeenCalled();
  });

  it('warns with the password masked and the error code when Redis is unreachable from the start', async () => {
    const { log, lines, at } = captureLogger();
    const port = await freePort();
    connect({ url: `redis://nightshift:s3cret@127.0.0.1:${port}/2`, log, role: 'scheduler' });
    await vi.waitFor(() => expect(at(WARN)).toHaveLength(1), { timeout: 5_000 });
    expect(at(WARN)[0]).toMatchObject({
      redis: `redis://nightshift:***@127.0.0.1:${port}/2`,
      client: 'scheduler',
      code: 'ECONNREFUSED',
    });
    expect(JSON.stringify(lines)).not.toContain('s3cret');
  });
});

describe('pingRedis', () => {
  it('answers false for a client that is still connecting', async () => {
    expect(await pingRedis(connect(), 1_000)).toBe(false);
  });

  it('answers true when Redis replies, and false once the timeout passes while Redis is stalled', async () => {
    const redis = connect();
    const admin = connect();
    await Promise.all([redis.ping(), admin.ping()]);
    expect(await pingRedis(redis, 1_000)).toBe(true);
    await admin.client('PAUSE', 400, 'ALL');
    const started = Date.now();
    expect(await pingRedis(redis, 100)).toBe(false);
    expect(Date.now() - started).toBeLessThan(300);
  });

  it('answers false at once while the connection is down, without queueing a PING', async () => {
    const redis = connect();
    await redis.ping();
    await killServer();
    await vi.waitFor(() => expect(redis.status).not.toBe('ready'));
    const started = Date.now();
    expect(await pingRedis(redis, 5_000)).toBe(false);
    expect(Date.now() - started).toBeLessThan(50);
  });
});

describe('Redis URLs', () => {
  it('masks the password in safeRedisUrl, whether or not the URL parses', () => {
    expect(safeRedisUrl('redis://user:pa%40ss@redis.internal:6380/1')).toBe(
      'redis://user:***@redis.internal:6380/1',
    );
    expect(safeRedisUrl('rediss://:token@host')).toBe('rediss://:***@host');
    expect(safeRedisUrl('redis://host:6379')).toBe('redis://host:6379');
    expect(safeRedisUrl('redis://host:6379?password=s3cret&sentinelPassword=s3cret&db=2')).toBe(
      'redis://host:6379?password=***&sentinelPassword=***&db=2',
    );
    expect(safeRedisUrl('redis://user:p@ss word@host:bad')).not.toContain('ss word');
  });

  it('rejects a URL that is not redis:// or rediss:// with a RedisUrlError that never repeats it', () => {
    for (const url of ['http://user:s3cret@host:6379', 'localhost:6379', 's3cret garbage']) {
      const attempt = () => createRedis({ url, role: 'cli' });
      expect(attempt).toThrow(RedisUrlError);
      try {
        attempt();
      } catch (error) {
        expect((error as RedisUrlError).code).toBe('NS_REDIS_URL_INVALID');
        expect((error as Error).message).not.toContain('s3cret');
        expect((error as Error).message).toMatch(/redis:\/\/ or rediss:\/\/|not a valid URL/);
      }
    }
  });

  it('backs off reconnects exponentially from 50 ms and never waits more than 5 s', () => {
    expect([1, 2, 3, 4].map(reconnectDelay)).toEqual([50, 100, 200, 400]);
    expect(reconnectDelay(8)).toBe(MAX_RECONNECT_DELAY_MS);
    expect(reconnectDelay(1_000_000)).toBe(MAX_RECONNECT_DELAY_MS);
  });
});
