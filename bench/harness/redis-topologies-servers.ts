import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from '../../src/store/local-server.js';
import { eventually } from './eventually.js';

/**
 * What the topologies of bench/harness/redis-topologies.ts are made of: redis-server processes,
 * each leading a process group of its own and stopped as a group, the helper's own questions to
 * them, and the certificates they speak TLS with.
 */

const run = promisify(execFile);

/** Told of each redis-server as it starts (a test's runner kills what a failed file left running). */
export type OnSpawn = (child: ChildProcess) => void;

/** A redis-server started here: it leads a process group of its own, stopped as a group. */
export interface Group {
  readonly child: ChildProcess;
  readonly port: number;
}

/** `count` distinct free ports on 127.0.0.1. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** The ids of the processes in process group `group` (Linux's /proc). */
async function groupMembers(group: number): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const members = await Promise.all(
    pids.map(async (pid) => {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      // the fields after the command, whose name may hold spaces: state, parent, group
      const groupOf = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      return groupOf === group ? [Number(pid)] : [];
    }),
  );
  return members.flat();
}

/**
 * Whether a process of group `group` holds the socket listening on 127.0.0.1:`port` (Linux's
 * /proc): a port picked free may be taken by another process before redis-server binds it, and
 * a test handed that port would talk to the other process.
 */
export async function groupListensOn(group: number, port: number): Promise<boolean> {
  const table = await readFile('/proc/net/tcp', 'utf8');
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const listening = new Set(
    table
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A')
      .map((fields) => `socket:[${fields[9]}]`),
  );
  if (listening.size === 0) return false;
  for (const pid of await groupMembers(group)) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    const targets = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
    if (targets.some((target) => listening.has(target))) return true;
  }
  return false;
}

export async function startGroup(args: readonly string[], port: number, onSpawn?: OnSpawn): Promise<Group> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await once(child, 'spawn');
  onSpawn?.(child);
  const deadline = Date.now() + 10_000;
  while (!(await groupListensOn(child.pid as number, port))) {
    if (child.exitCode !== null) throw new Error(`redis-server ${args.join(' ')} exited: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port} within 10 s`);
    await sleep(20);
  }
  return { child, port };
}

/** Kills a group (SIGKILL by default) and waits for its leader to exit. */
export async function stopGroup({ child }: Group, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
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
export const until = (what: string, check: () => Promise<boolean>) =>
  eventually(what, () => check().catch(() => false), 20_000, 100);

/** A plain client on one process, for the helper's own questions to it. */
export async function ask<T>(
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

/** Stops every group and removes the data folder: a failed start's cleanup and a topology's `stop()`. */
export async function stopAll(groups: readonly Group[], dir: string): Promise<void> {
  await Promise.all(groups.map((group) => stopGroup(group)));
  await rm(dir, { recursive: true, force: true });
}

/** The files of a CA and of a certificate it signed. */
export interface Certificates {
  ca: string;
  cert: string;
  key: string;
}

/** A CA and a certificate it signed for 127.0.0.1, made with openssl in `dir`. */
export async function certificates(dir: string): Promise<Certificates> {
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
