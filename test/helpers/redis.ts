import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Redis as RedisClient } from 'ioredis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { freePort, RedisServerMissingError, startLocalRedis } from '../../src/store/local-server.js';
import { createRedis } from '../../src/store/redis.js';

/** A Redis for one test file, and the means to break it. */
export interface TestRedis {
  url: string;
  /** Stops and starts it again on the same port, with its data (append-only file). */
  restart(): Promise<void>;
  /** Kills it without warning (SIGKILL); `restart()` brings it back. */
  kill(): Promise<void>;
  /** Stops it for good and removes what it left behind. */
  stop(): Promise<void>;
  kind: 'container' | 'local' | 'external';
}

/** How long a Docker engine has to answer before we fall back to a local redis-server. */
const ENGINE_TIMEOUT_MS = 3_000;

/**
 * Whether a Docker engine may be listening, judged from the environment alone: importing
 * testcontainers and letting it probe costs seconds on a machine that has the docker CLI but
 * no engine, as CI runners without Docker and this dev box do.
 */
function dockerEngineLikely(): boolean {
  if (process.env.DOCKER_HOST) return true;
  const sockets = [
    '/var/run/docker.sock',
    join(homedir(), '.docker', 'run', 'docker.sock'),
    join(homedir(), '.docker', 'desktop', 'docker.sock'),
  ];
  if (process.env.XDG_RUNTIME_DIR) sockets.push(join(process.env.XDG_RUNTIME_DIR, 'docker.sock'));
  return sockets.some((path) => existsSync(path));
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function startContainer(): Promise<TestRedis | undefined> {
  if (!dockerEngineLikely()) return undefined;
  try {
    const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
    const runtime = await withTimeout(getContainerRuntimeClient(), ENGINE_TIMEOUT_MS, 'Docker engine');
    // A fixed host port, because Docker may map a different random port after a restart.
    const port = await freePort();
    const container = await new GenericContainer('redis:7-alpine')
      .withCommand(['redis-server', '--appendonly', 'yes'])
      .withExposedPorts({ container: 6379, host: port })
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .start();
    return {
      url: `redis://${container.getHost()}:${port}`,
      kind: 'container',
      restart: () => container.restart(),
      // `stop({ timeout: 0 })` sends SIGTERM first, which lets Redis shut down cleanly; a crash
      // test needs the process to die mid-stride.
      kill: () => runtime.container.getById(container.getId()).kill({ signal: 'SIGKILL' }),
      stop: async () => {
        await container.stop();
      },
    };
  } catch {
    return undefined;
  }
}

async function startLocal(): Promise<TestRedis | undefined> {
  try {
    const server = await startLocalRedis();
    return { url: server.url, kind: 'local', restart: server.restart, kill: server.kill, stop: server.stop };
  } catch (error) {
    // startLocalRedis can reject with the raw spawn ENOENT instead of RedisServerMissingError:
    // `once(proc, 'spawn')` rejects on the same 'error' event and wins the race.
    if (error instanceof RedisServerMissingError || (error as NodeJS.ErrnoException).code === 'ENOENT') {
      return undefined;
    }
    throw error;
  }
}

function external(url: string): TestRedis {
  const refuse = async () => {
    throw new Error(
      'This test needs a Redis it controls (to restart or kill it), but REDIS_URL points at a shared one. ' +
        'Install redis-server or start a Docker engine.',
    );
  };
  return { url, kind: 'external', restart: refuse, kill: refuse, stop: async () => {} };
}

/**
 * A private Redis when one can be had: a `redis:7-alpine` container if a Docker engine answers,
 * else a `redis-server` child process, else the shared Redis at `REDIS_URL`.
 */
export async function startTestRedis(): Promise<TestRedis> {
  const redis = (await startContainer()) ?? (await startLocal());
  if (redis) return redis;
  if (process.env.REDIS_URL) return external(process.env.REDIS_URL);
  throw new Error(
    'No Redis for the tests: no Docker engine answered, redis-server is not on the PATH and REDIS_URL is unset. ' +
      'Install Redis 7 (apt-get install -y redis-server; brew install redis) or set REDIS_URL.',
  );
}

/** Empties the current database, for a test that needs Redis to itself. */
export async function flushRedis(url: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.flushdb();
  } finally {
    redis.disconnect();
  }
}

/** A key prefix of its own for each test, so tests sharing one Redis never see each other's keys. */
export function uniquePrefix(label = 'test'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** Every key under `prefix` and every value it holds, as text, whatever the key's type. */
export async function dumpRedis(redis: Redis, prefix: string): Promise<string> {
  const keys = await redis.keys(`*${prefix}*`);
  const parts: string[] = [...keys];
  for (const key of keys) {
    const type = await redis.type(key);
    if (type === 'string') parts.push((await redis.get(key)) ?? '');
    else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
    else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
    else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
    else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES')));
    else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
  }
  return parts.join('\n');
}

/** A test file's Redis and a client on it. */
export interface TestRedisClient {
  server: TestRedis;
  redis: RedisClient;
}

/**
 * A Redis for the test file (startTestRedis) and a client on it, started before its first test
 * and stopped after its last; `started` hands them to the file's own variables.
 */
export function useTestRedisClient(started: (client: TestRedisClient) => void): void {
  let client: TestRedisClient | undefined;
  beforeAll(async () => {
    const server = await startTestRedis();
    client = { server, redis: createRedis({ url: server.url, role: 'test' }) };
    started(client);
  });
  afterAll(async () => {
    await client?.redis.quit();
    await client?.server.stop();
  });
}
