import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type { RedisTopology } from '../../src/config/index.js';
import { freePort, isListening } from '../../src/store/local-server.js';
import { connectRedis, type RedisConnection } from '../../src/store/redis.js';
import { eventually } from './eventually.js';

/**
 * Redis clusters and Sentinel topologies on 127.0.0.1 for tests (test/helpers/redis-topologies.ts)
 * and drills (bench/harness/edge-drill.ts): every redis-server leads a process group of its own,
 * stopped as a group.
 */

const run = promisify(execFile);

/** A connection for a role on a test's topology, made as nightshift makes its own. */
export type RedisConnector = (role: string) => RedisConnection;

/** Told of each redis-server as it starts (a test's runner kills what a failed file left running). */
export type OnSpawn = (child: ChildProcess) => void;

/** A redis-server started here: it leads a process group of its own, stopped as a group. */
interface Group {
  readonly child: ChildProcess;
  readonly port: number;
}

/** `count` distinct free ports on 127.0.0.1. */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

async function startGroup(args: readonly string[], port: number, onSpawn?: OnSpawn): Promise<Group> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await once(child, 'spawn');
  onSpawn?.(child);
  const deadline = Date.now() + 10_000;
  while (!(await isListening(port))) {
    if (child.exitCode !== null) throw new Error(`redis-server ${args.join(' ')} exited: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port} within 10 s`);
    await sleep(20);
  }
  return { child, port };
}

/** Kills a group (SIGKILL by default) and waits for its leader to exit. */
async function stopGroup({ child }: Group, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  try {
    process.kill(-(child.pid as number), signal);
  } catch {
    // gone already
  }
  await exited;
}

/** Polls `check` every 100 ms for up to 20 s; a question that fails (the process is still starting) is a no. */
const until = (what: string, check: () => Promise<boolean>) =>
  eventually(what, () => check().catch(() => false), 20_000, 100);

/** A plain client on one process, for the helper's own questions to it. */
async function ask<T>(
  port: number,
  question: (redis: Redis) => Promise<T>,
  password?: string,
  ca?: string,
  username?: string,
): Promise<T> {
  const redis = new Redis({
    port,
    host: '127.0.0.1',
    username,
    password,
    ...(ca ? { tls: { ca } } : {}),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    return await question(redis);
  } finally {
    redis.disconnect();
  }
}

function addresses(list: readonly { host: string; port: number }[]): string {
  return list.map(({ host, port }) => `${host}:${port}`).join(',');
}

/** A Redis topology a test started, and the means to reach and stop it. */
export interface TestTopology {
  readonly topology: RedisTopology;
  /** The variables that point a nightshift process at it. */
  readonly environment: Record<string, string>;
  /** A connection made as nightshift makes its own (connectRedis). */
  readonly connect: RedisConnector;
  /** Stops every process (its whole group) and removes the data folder. */
  stop(): Promise<void>;
}

/** A CA and a certificate it signed for 127.0.0.1, made with openssl in `dir`. */
async function certificates(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  const [ca, caKey, cert, key, request, extensions] = [
    'ca.crt',
    'ca.key',
    'redis.crt',
    'redis.key',
    'redis.csr',
    'san.cnf',
  ].map((name) => join(dir, name)) as [string, string, string, string, string, string];
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    ca,
    '-days',
    '1',
    '-subj',
    '/CN=nightshift-test-ca',
  ]);
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    request,
    '-subj',
    '/CN=127.0.0.1',
  ]);
  await writeFile(extensions, 'subjectAltName=IP:127.0.0.1\n');
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    request,
    '-CA',
    ca,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '1',
    '-extfile',
    extensions,
  ]);
  return { ca, cert, key };
}

/**
 * A test cluster's options: a password its nodes require (the `default` user's, or with `user`
 * that ACL user's, `default` then off), TLS (a CA of its own) on every port.
 */
export interface ClusterOptions {
  password?: string;
  user?: string;
  tls?: boolean;
  onSpawn?: OnSpawn;
}

/** A cluster a test started; with TLS, the CA file that signed its nodes' certificate. */
export interface TestCluster extends TestTopology {
  readonly caFile: string | undefined;
}

/** Three masters, no replicas: every slot served, `cluster_state:ok` on each. */
export async function startRedisCluster({
  password,
  user,
  tls = false,
  onSpawn,
}: ClusterOptions = {}): Promise<TestCluster> {
  const auth =
    password && user
      ? // one argument per ACL rule: Redis joins them into the config line
        ['--user', user, 'on', `>${password}`, '~*', '&*', '+@all', '--user', 'default', 'off']
      : password
        ? ['--requirepass', password]
        : [];
  const dir = await mkdtemp(join(tmpdir(), 'nightshift-cluster-'));
  const groups: Group[] = [];
  let files: { ca: string; cert: string; key: string } | undefined;
  let ca: string | undefined;
  try {
    if (tls) {
      files = await certificates(dir);
      ca = await readFile(files.ca, 'utf8');
    }
    const tlsArgs = files
      ? [
          '--tls-cluster',
          'yes',
          '--tls-cert-file',
          files.cert,
          '--tls-key-file',
          files.key,
          '--tls-ca-cert-file',
          files.ca,
          '--tls-auth-clients',
          'no',
        ]
      : [];
    // the bus port is chosen too: the default (port + 10000) may fall past 65535
    const ports = await freePorts(6);
    for (let i = 0; i < 3; i++) {
      const port = ports[i] as number;
      groups.push(
        await startGroup(
          [
            '--bind',
            '127.0.0.1',
            // with TLS, the port speaks only TLS
            ...(files ? ['--port', '0', '--tls-port', String(port), ...tlsArgs] : ['--port', String(port)]),
            '--cluster-port',
            String(ports[i + 3]),
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(dir, `nodes-${port}.conf`),
            '--cluster-node-timeout',
            '2000',
            '--dir',
            dir,
            '--appendonly',
            'no',
            '--save',
            '',
            '--loglevel',
            'warning',
            ...auth,
          ],
          port,
          onSpawn,
        ),
      );
    }
    await run('redis-cli', [
      ...(user ? ['--user', user] : []),
      ...(password ? ['-a', password, '--no-auth-warning'] : []),
      ...(files ? ['--tls', '--cacert', files.ca] : []),
      '--cluster',
      'create',
      ...groups.map(({ port }) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const { port } of groups)
      await until(`cluster_state:ok on ${port}`, () =>
        ask(
          port,
          async (redis) => (await redis.cluster('INFO')).includes('cluster_state:ok'),
          password,
          ca,
          user,
        ),
      );
  } catch (error) {
    await Promise.all(groups.map((group) => stopGroup(group)));
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const topology = {
    kind: 'cluster' as const,
    nodes: groups.map(({ port }) => ({ host: '127.0.0.1', port })),
    username: user,
    password,
    tls: ca ? { ca } : undefined,
  };
  return {
    topology,
    caFile: files?.ca,
    environment: { NIGHTSHIFT_REDIS_CLUSTER_NODES: addresses(topology.nodes) },
    connect: (role) => connectRedis({ topology, role }),
    stop: async () => {
      await Promise.all(groups.map((group) => stopGroup(group)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A primary, its replica and three Sentinels watching it (quorum 2), quick to fail over. */
export interface TestSentinels extends TestTopology {
  /** With TLS, the CA file that signed every certificate. */
  readonly caFile: string | undefined;
  /** Kills the primary (SIGKILL, its whole group) and answers when (epoch ms). */
  killPrimary(): Promise<number>;
  /** The port of the primary the Sentinels name now. */
  primaryPort(): Promise<number>;
}

export const SENTINEL_NAME = 'nightshift-test';
/** How long the Sentinels wait before they call an unanswering primary down. */
export const DOWN_AFTER_MS = 1_000;

/**
 * Passwords the primary and replica (`password`) and the Sentinels (`sentinelPassword`) require;
 * `tls`: every one of them speaks only TLS (a CA of its own).
 */
export interface SentinelOptions {
  password?: string;
  sentinelPassword?: string;
  tls?: boolean;
  onSpawn?: OnSpawn;
}

export async function startRedisSentinels({
  password,
  sentinelPassword,
  tls = false,
  onSpawn,
}: SentinelOptions = {}): Promise<TestSentinels> {
  const dir = await mkdtemp(join(tmpdir(), 'nightshift-sentinel-'));
  const groups: Group[] = [];
  const [primaryPort, replicaPort, ...sentinelPorts] = (await freePorts(5)) as [number, number, ...number[]];
  const files = tls ? await certificates(dir) : undefined;
  const ca = files ? await readFile(files.ca, 'utf8') : undefined;
  // with TLS, each port speaks only TLS, and replicas and Sentinels reach each other over it
  const tlsSettings = files
    ? [
        ['tls-cert-file', files.cert],
        ['tls-key-file', files.key],
        ['tls-ca-cert-file', files.ca],
        ['tls-auth-clients', 'no'],
        ['tls-replication', 'yes'],
      ]
    : [];
  const listen = (port: number) =>
    files ? [['port', '0'], ['tls-port', String(port)], ...tlsSettings] : [['port', String(port)]];
  const server = (port: number, ...extra: string[]) => [
    '--bind',
    '127.0.0.1',
    ...listen(port).flatMap(([name, value]) => [`--${name}`, value as string]),
    '--dir',
    dir,
    '--appendonly',
    'no',
    '--save',
    '',
    '--dbfilename',
    `dump-${port}.rdb`,
    '--loglevel',
    'warning',
    ...(password ? ['--requirepass', password, '--masterauth', password] : []),
    ...extra,
  ];
  try {
    // the replica's first sync at once, not after the default 5 s of waiting for more replicas
    groups.push(
      await startGroup(server(primaryPort, '--repl-diskless-sync-delay', '0'), primaryPort, onSpawn),
    );
    groups.push(
      await startGroup(
        server(replicaPort, '--replicaof', '127.0.0.1', String(primaryPort)),
        replicaPort,
        onSpawn,
      ),
    );
    for (const port of sentinelPorts) {
      // each Sentinel rewrites its own file as it learns the others and the replica
      const file = join(dir, `sentinel-${port}.conf`);
      await writeFile(
        file,
        [
          ...listen(port).map((setting) => setting.join(' ')),
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_NAME} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${SENTINEL_NAME} 5000`,
          ...(password ? [`sentinel auth-pass ${SENTINEL_NAME} ${password}`] : []),
          // the Sentinels talk to each other with the password they require
          ...(sentinelPassword
            ? [`requirepass ${sentinelPassword}`, `sentinel sentinel-pass ${sentinelPassword}`]
            : []),
          '',
        ].join('\n'),
      );
      groups.push(await startGroup([file, '--sentinel', '--loglevel', 'warning'], port, onSpawn));
    }
    await until('the replica in sync', () =>
      ask(
        replicaPort,
        async (redis) => (await redis.info('replication')).includes('master_link_status:up'),
        password,
        ca,
      ),
    );
    // a failover needs every Sentinel to know the replica and a majority of the others
    for (const port of sentinelPorts)
      await until(`sentinel ${port} to know the replica and the other sentinels`, () =>
        ask(
          port,
          async (redis) => {
            const replicas = (await redis.call('SENTINEL', 'REPLICAS', SENTINEL_NAME)) as unknown[];
            const others = (await redis.call('SENTINEL', 'SENTINELS', SENTINEL_NAME)) as unknown[];
            return replicas.length === 1 && others.length === 2;
          },
          sentinelPassword,
          ca,
        ),
      );
  } catch (error) {
    await Promise.all(groups.map((group) => stopGroup(group)));
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const topology = {
    kind: 'sentinel' as const,
    sentinels: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })),
    name: SENTINEL_NAME,
    username: undefined,
    password,
    sentinelPassword,
    tls: ca ? { ca } : undefined,
  };
  return {
    topology,
    environment: {
      NIGHTSHIFT_REDIS_SENTINELS: addresses(topology.sentinels),
      NIGHTSHIFT_REDIS_SENTINEL_NAME: SENTINEL_NAME,
    },
    connect: (role) => connectRedis({ topology, role }),
    caFile: files?.ca,
    killPrimary: async () => {
      const at = Date.now();
      await stopGroup(groups[0] as Group);
      return at;
    },
    primaryPort: () =>
      ask(
        sentinelPorts[0] as number,
        async (redis) => {
          const [, port] = (await redis.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME)) as [
            string,
            string,
          ];
          return Number(port);
        },
        sentinelPassword,
        ca,
      ),
    stop: async () => {
      await Promise.all(groups.map((group) => stopGroup(group)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
