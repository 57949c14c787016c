import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { groupListensOn } from '../../bench/harness/redis-topologies-servers.js';
import { loadSettings, serviceRedis } from '../../src/config/index.js';
import { freePort } from '../../src/store/local-server.js';
import { connectRedis } from '../../src/store/redis.js';
import { running } from './processes.js';
import type { RedisCommand } from './redis-command.js';

const run = promisify(execFile);

/**
 * A Redis started here by a deployment's own command (`sh -c <script>`, as its container would
 * run it), with the secret file it reads moved from its container path to a temporary one and a
 * port and data folder of its own.
 */
export interface DeployedRedis {
  port: number;
  pid: number;
  /** The password file the script reads, here. */
  passwordFile: string;
  /** Runs a shell check (a health check or probe) against this Redis, with its secret path and port; its exit code. */
  check(script: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Runs `script` with `/bin/sh` (dash here, busybox ash in redis:7-alpine: both POSIX shells) in a
 * process group of its own. `secretPath` is where the script reads the password in its container;
 * `password` is written to a temporary file in its place.
 */
export async function runDeployedRedis(
  script: string,
  secretPath: string,
  password: string,
): Promise<DeployedRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'nightshift-deployed-redis-'));
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, `${password}\n`);
  const port = await freePort();
  const local = (text: string) => text.split(secretPath).join(passwordFile);
  // where this Redis listens and keeps its files: configuration given after the script's own
  const placed = local(script).replace('redis-server - ', `redis-server - --port ${port} --dir ${dir} `);
  if (placed === local(script)) throw new Error('the script does not start `redis-server -`');
  const child: ChildProcess = spawn('sh', ['-c', placed], { cwd: dir, detached: true, stdio: 'ignore' });
  running.set(child, true);
  child.once('exit', () => running.delete(child));
  const deadline = Date.now() + 10_000;
  // its own group's Redis, not whatever process took the port before it bound it
  while (!(await groupListensOn(child.pid as number, port))) {
    if (child.exitCode !== null) throw new Error(`the Redis script exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`the Redis script did not listen on ${port} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    port,
    pid: child.pid as number,
    passwordFile,
    check: async (check) => {
      try {
        await run('sh', ['-c', local(check).replace('redis-cli ', `redis-cli -p ${port} `)]);
        return 0;
      } catch (error) {
        return (error as { code?: number }).code ?? -1;
      }
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-(child.pid as number), 'SIGTERM');
        await once(child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What /proc says a process was started with and holds: its arguments and its environment. */
function processText(pid: number): string {
  return ['cmdline', 'environ'].map((file) => readFileSync(`/proc/${pid}/${file}`, 'latin1')).join('\n');
}

/**
 * Runs a deployment's Redis command here and holds it to what the deployment promises: Redis
 * requires `password`, which /proc shows in neither its arguments nor its environment; `check`
 * (its health check or readiness probe) passes with the password and fails without it; nightshift
 * connects with the password file (REDIS_URL + NIGHTSHIFT_REDIS_PASSWORD_FILE) and is refused
 * without it.
 */
export async function expectPasswordRequired(
  command: RedisCommand,
  check: string,
  password: string,
): Promise<void> {
  const redis = await runDeployedRedis(command.script ?? '', command.passwordFile ?? '', password);
  const connections: { disconnect(): void }[] = [];
  const connect = (environment: Record<string, string>) => {
    const connection = connectRedis({
      topology: serviceRedis(loadSettings({ REDIS_URL: `redis://127.0.0.1:${redis.port}`, ...environment })),
      role: 'test',
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    connections.push(connection);
    return connection;
  };
  try {
    expect(processText(redis.pid)).not.toContain(password);
    expect(await redis.check(check)).toBe(0);
    // redis-cli answers NOAUTH without the password, and exits 0 all the same: the check must not pass
    expect(await redis.check(check.replace(/REDISCLI_AUTH="[^"]*" /, ''))).not.toBe(0);
    expect(await connect({ NIGHTSHIFT_REDIS_PASSWORD_FILE: redis.passwordFile }).ping()).toBe('PONG');
    await expect(connect({}).ping()).rejects.toThrow(/NOAUTH/);
  } finally {
    for (const connection of connections) connection.disconnect();
    await redis.stop();
  }
}
