import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { NightshiftError } from '../errors/index.js';

export interface LocalRedisOptions {
  /** Port to listen on; default a free one. */
  port?: number;
  /** Data folder; default a new temporary folder, removed by `stop()`. */
  dir?: string;
  /** Append-only persistence, so a restart keeps the data. Default true. */
  appendOnly?: boolean;
  /** The redis-server binary. Default `redis-server` from the PATH. */
  binary?: string;
}

/** A private `redis-server` child process on 127.0.0.1, for tests, benchmarks and the demo. */
export interface LocalRedis {
  url: string;
  port: number;
  dir: string;
  /** Stops the server gracefully (SHUTDOWN semantics via SIGTERM) and keeps its data folder. */
  halt(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  restart(): Promise<void>;
  /** Kills it without warning (SIGKILL). */
  kill(): Promise<void>;
  /** Stops it and removes a data folder it created. */
  stop(): Promise<void>;
}

export class RedisServerMissingError extends NightshiftError {
  override name = 'RedisServerMissingError';
  readonly code = 'NS_REDIS_SERVER_MISSING';
  constructor(binary: string) {
    super(
      `${binary} was not found on the PATH. Install Redis 7 (Debian/Ubuntu: apt-get install -y redis-server; ` +
        'macOS: brew install redis) or point REDIS_URL at a running Redis.',
    );
  }
}

/**
 * The port a local Redis was to listen on answers for another process: a port picked free was
 * taken (by any process binding port 0) before redis-server bound it, or the one given is in use.
 */
export class RedisPortTakenError extends NightshiftError {
  override name = 'RedisPortTakenError';
  readonly code = 'NS_REDIS_PORT_TAKEN';
  constructor(port: number) {
    super(`127.0.0.1:${port} is taken by another process, so redis-server could not listen there`);
  }
}

/** How often a server on a port picked free is started again on another when its port was taken. */
const PORT_ATTEMPTS = 3;

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

/**
 * The process id of the Redis answering on 127.0.0.1:`port`, or undefined when nothing listens
 * there or what does is not Redis answering within a second (an HTTP server that took the port).
 */
async function redisProcessId(port: number): Promise<number | undefined> {
  const probe = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    const id = /^process_id:(\d+)/m.exec(await probe.info('server'))?.[1];
    return id === undefined ? undefined : Number(id);
  } catch {
    return undefined;
  } finally {
    probe.disconnect();
  }
}

/**
 * Waits until `child` itself answers on the port. Something else listening there is not it: a
 * client handed that port's URL would wait forever for answers in Redis's protocol.
 */
async function waitForOwnServer(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (await isListening(port)) throw new RedisPortTakenError(port);
      throw new Error(`redis-server exited with code ${child.exitCode ?? child.signalCode} during start`);
    }
    const answering = await redisProcessId(port);
    if (answering === child.pid) return;
    if (answering !== undefined) throw new RedisPortTakenError(port);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`redis-server did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
}

/**
 * Starts redis-server on 127.0.0.1 and resolves once that very process answers. On a port picked
 * free it starts again on another should the port be taken first (up to PORT_ATTEMPTS times).
 */
export async function startLocalRedis(options: LocalRedisOptions = {}): Promise<LocalRedis> {
  const ownsDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'nightshift-redis-')));
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      return await startOn(port, dir, ownsDir, options);
    } catch (error) {
      const retry =
        error instanceof RedisPortTakenError && options.port === undefined && attempt < PORT_ATTEMPTS;
      if (!retry) {
        if (ownsDir) await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
}

async function startOn(
  port: number,
  dir: string,
  ownsDir: boolean,
  options: LocalRedisOptions,
): Promise<LocalRedis> {
  const binary = options.binary ?? 'redis-server';
  const args = [
    '--bind',
    '127.0.0.1',
    '--port',
    String(port),
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    options.appendOnly === false ? 'no' : 'yes',
    '--appendfsync',
    'everysec',
    '--protected-mode',
    'yes',
    '--loglevel',
    'warning',
  ];

  let child: ChildProcess | undefined;
  const end = async (signal: NodeJS.Signals) => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill(signal);
    await exited;
  };
  const launch = async () => {
    // in a process group of its own: a Ctrl-C meant for its owner must not stop it under the
    // owner's feet while the owner is still shutting down (the owner stops it last)
    const proc = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    // once() rejects on 'error' as well, so the spawn outcome is read from that rejection
    await once(proc, 'spawn').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new RedisServerMissingError(binary) : error;
    });
    child = proc;
    try {
      await waitForOwnServer(port, proc, 10_000);
    } catch (error) {
      await end('SIGKILL');
      throw error;
    }
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    halt: () => end('SIGTERM'),
    restart: async () => {
      await end('SIGTERM');
      await launch();
    },
    kill: () => end('SIGKILL'),
    stop: async () => {
      await end('SIGTERM');
      if (ownsDir) await rm(dir, { recursive: true, force: true });
    },
  };
}
