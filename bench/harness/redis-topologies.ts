import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RedisTopology } from '../../src/config/index.js';
import { connectRedis, type RedisConnection } from '../../src/store/redis.js';
import {
  ask,
  type Certificates,
  certificates,
  freePorts,
  type Group,
  type OnSpawn,
  startGroup,
  stopAll,
  stopGroup,
  until,
} from './redis-topologies-servers.js';

/**
 * Redis clusters and Sentinel topologies on 127.0.0.1 for tests (test/helpers/redis-topologies.ts)
 * and drills (bench/harness/edge-drill.ts): every redis-server leads a process group of its own,
 * stopped as a group (bench/harness/redis-topologies-servers.ts).
 */

export type { OnSpawn } from './redis-topologies-servers.js';

const run = promisify(execFile);

/** A connection for a role on a test's topology, made as nightshift makes its own. */
export type RedisConnector = (role: string) => RedisConnection;

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

/** The cluster nodes' `--user`/`--requirepass` arguments. */
function clusterAuth(password: string | undefined, user: string | undefined): string[] {
  return password && user
    ? // one argument per ACL rule: Redis joins them into the config line
      ['--user', user, 'on', `>${password}`, '~*', '&*', '+@all', '--user', 'default', 'off']
    : password
      ? ['--requirepass', password]
      : [];
}

/** One cluster node's arguments: its port and bus port, its files in `dir`, TLS and auth. */
function clusterNodeArgs(
  node: { port: number; busPort: number },
  { dir, files, auth }: { dir: string; files: Certificates | undefined; auth: readonly string[] },
): string[] {
  return [
    // with TLS, the port speaks only TLS
    ...(files
      ? [
          '--port',
          '0',
          '--tls-port',
          String(node.port),
          ...asArgs(tlsSettings(files)),
          '--tls-cluster',
          'yes',
        ]
      : ['--port', String(node.port)]),
    '--cluster-port',
    String(node.busPort),
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    join(dir, `nodes-${node.port}.conf`),
    '--cluster-node-timeout',
    '2000',
    ...quietServerArgs(dir),
    ...auth,
  ];
}

/** What every data server here runs with: loopback only, its files in `dir`, nothing persisted, quiet logs. */
function quietServerArgs(dir: string): string[] {
  return ['--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'no', '--save', '', '--loglevel', 'warning'];
}

/** The settings of a server whose ports speak only TLS, with these certificates, as name-value pairs. */
function tlsSettings(files: Certificates): string[][] {
  return [
    ['tls-cert-file', files.cert],
    ['tls-key-file', files.key],
    ['tls-ca-cert-file', files.ca],
    ['tls-auth-clients', 'no'],
  ];
}

/** Name-value settings as command-line arguments. */
function asArgs(settings: readonly string[][]): string[] {
  return settings.flatMap(([name, value]) => [`--${name}`, value as string]);
}

/** `redis-cli --cluster create` over the nodes, then waits for `cluster_state:ok` on each. */
async function formCluster(
  groups: readonly Group[],
  { password, user, files, ca }: { password?: string; user?: string; files?: Certificates; ca?: string },
): Promise<void> {
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
}

/** Three masters, no replicas: every slot served, `cluster_state:ok` on each. */
export async function startRedisCluster({
  password,
  user,
  tls = false,
  onSpawn,
}: ClusterOptions = {}): Promise<TestCluster> {
  const auth = clusterAuth(password, user);
  const dir = await mkdtemp(join(tmpdir(), 'nightshift-cluster-'));
  const groups: Group[] = [];
  let files: Certificates | undefined;
  let ca: string | undefined;
  try {
    if (tls) {
      files = await certificates(dir);
      ca = await readFile(files.ca, 'utf8');
    }
    // the bus port is chosen too: the default (port + 10000) may fall past 65535
    const ports = await freePorts(6);
    for (let i = 0; i < 3; i++) {
      const port = ports[i] as number;
      const args = clusterNodeArgs({ port, busPort: ports[i + 3] as number }, { dir, files, auth });
      groups.push(await startGroup(args, port, onSpawn));
    }
    await formCluster(groups, { password, user, files, ca });
  } catch (error) {
    await stopAll(groups, dir);
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
    stop: () => stopAll(groups, dir),
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

/** Where and how a Sentinel topology runs: its ports, data folder, certificates and passwords. */
interface SentinelSetup {
  dir: string;
  files: Certificates | undefined;
  ca: string | undefined;
  password: string | undefined;
  sentinelPassword: string | undefined;
  primaryPort: number;
  replicaPort: number;
  sentinelPorts: number[];
  onSpawn: OnSpawn | undefined;
}

/** The settings that make a process listen on `port`, as name-value pairs. */
function listenSettings(port: number, files: Certificates | undefined): string[][] {
  // with TLS, each port speaks only TLS, and replicas and Sentinels reach each other over it
  return files
    ? [['port', '0'], ['tls-port', String(port)], ...tlsSettings(files), ['tls-replication', 'yes']]
    : [['port', String(port)]];
}

/** The primary's or the replica's arguments, `extra` last. */
function dataServerArgs({ dir, files, password }: SentinelSetup, port: number, ...extra: string[]): string[] {
  return [
    ...asArgs(listenSettings(port, files)),
    ...quietServerArgs(dir),
    '--dbfilename',
    `dump-${port}.rdb`,
    ...(password ? ['--requirepass', password, '--masterauth', password] : []),
    ...extra,
  ];
}

/** The configuration file of the Sentinel on `port`. */
function sentinelConfig(
  { dir, files, password, sentinelPassword, primaryPort }: SentinelSetup,
  port: number,
): string {
  return [
    ...listenSettings(port, files).map((setting) => setting.join(' ')),
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
  ].join('\n');
}

/** Starts the primary, the replica and the Sentinels in that order, each pushed on `groups` once up. */
async function startSentinelGroups(setup: SentinelSetup, groups: Group[]): Promise<void> {
  const { dir, primaryPort, replicaPort, sentinelPorts, onSpawn } = setup;
  // the replica's first sync at once, not after the default 5 s of waiting for more replicas
  groups.push(
    await startGroup(
      dataServerArgs(setup, primaryPort, '--repl-diskless-sync-delay', '0'),
      primaryPort,
      onSpawn,
    ),
  );
  groups.push(
    await startGroup(
      dataServerArgs(setup, replicaPort, '--replicaof', '127.0.0.1', String(primaryPort)),
      replicaPort,
      onSpawn,
    ),
  );
  for (const port of sentinelPorts) {
    // each Sentinel rewrites its own file as it learns the others and the replica
    const file = join(dir, `sentinel-${port}.conf`);
    await writeFile(file, sentinelConfig(setup, port));
    groups.push(await startGroup([file, '--sentinel', '--loglevel', 'warning'], port, onSpawn));
  }
}

/** Waits for the replica to be in sync and every Sentinel to know it and the two others. */
async function awaitFailoverReady({
  replicaPort,
  sentinelPorts,
  password,
  sentinelPassword,
  ca,
}: SentinelSetup): Promise<void> {
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
}

/** The handle on a started Sentinel topology; `groups[0]` is the first primary. */
function sentinelsHandle(setup: SentinelSetup, groups: readonly Group[]): TestSentinels {
  const { dir, files, ca, password, sentinelPassword, sentinelPorts } = setup;
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
    stop: () => stopAll(groups, dir),
  };
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
  const setup: SentinelSetup = {
    dir,
    files,
    ca,
    password,
    sentinelPassword,
    primaryPort,
    replicaPort,
    sentinelPorts,
    onSpawn,
  };
  try {
    await startSentinelGroups(setup, groups);
    await awaitFailoverReady(setup);
  } catch (error) {
    await stopAll(groups, dir);
    throw error;
  }
  return sentinelsHandle(setup, groups);
}
