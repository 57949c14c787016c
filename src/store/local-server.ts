import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`redis-server exited with code ${child.exitCode} during start`);
    if (await isListening(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`redis-server did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
}

export async function startLocalRedis(options: LocalRedisOptions = {}): Promise<LocalRedis> {
  const binary = options.binary ?? 'redis-server';
  const port = options.port ?? (await freePort());
  const ownsDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'nightshift-redis-')));
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
  const launch = async () => {
    // in a process group of its own: a Ctrl-C meant for its owner must not stop it under the
    // owner's feet while the owner is still shutting down (the owner stops it last)
    const proc = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    // once() rejects on 'error' as well, so the spawn outcome is read from that rejection
    await once(proc, 'spawn').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new RedisServerMissingError(binary) : error;
    });
    child = proc;
    await waitForPort(port, proc, 10_000);
  };
  const end = async (signal: NodeJS.Signals) => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill(signal);
    await exited;
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
