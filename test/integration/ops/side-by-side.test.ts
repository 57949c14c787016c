import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OPS_PORT } from '../../../src/ops/index.js';
import { assertBuilt, type CliProcess, eventually, type LogLine } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis, uniquePrefix } from '../../helpers/redis.js';
import { IDLE_POLICY, killGroup, logLines, signalGroup, startService } from './service-group.js';

/** The ports a role with the default settings may take: 9464, then 9465 to 9473. */
const DEFAULT_PORTS = Array.from({ length: 10 }, (_, index) => DEFAULT_OPS_PORT + index);

let redis: TestRedis;
let dir: string;
const services: CliProcess[] = [];
const blockers: Server[] = [];

beforeAll(async () => {
  assertBuilt();
  redis = await startTestRedis();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-side-by-side-'));
  writeFileSync(join(dir, 'policy.yaml'), IDLE_POLICY);
});
afterEach(async () => {
  for (const service of services.splice(0)) killGroup(service);
  await Promise.all(blockers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});
afterAll(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Makes sure `port` on 127.0.0.1 is taken, as by a role already running on the host: holds it,
 * unless another process already does.
 */
async function takePort(port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' ? resolve() : reject(error),
    );
    server.listen(port, '127.0.0.1', () => {
      blockers.push(server);
      resolve();
    });
  });
}

/** A role with every ops setting left at its default (`NIGHTSHIFT_HTTP_PORT` unset). */
function startRole(args: string[], prefix: string): CliProcess {
  const service = startService(args, {
    REDIS_URL: redis.url,
    NIGHTSHIFT_REDIS_PREFIX: prefix,
    NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
    NIGHTSHIFT_API_KEY: 'k',
    NIGHTSHIFT_LOG_FORMAT: 'json',
    NIGHTSHIFT_HTTP_PORT: '',
    NIGHTSHIFT_HTTP_HOST: '',
  });
  services.push(service);
  return service;
}

function opsLine(service: CliProcess): Promise<LogLine> {
  return eventually(
    'the ops server line',
    () => logLines(service).find((line) => line.msg.startsWith('ops server')),
    15_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n--- output:\n${service.output()}`);
  });
}

const WARN = 40;

describe('roles side by side on one host with the default settings', () => {
  it('scheduler, worker and start keep running while 9464 is taken, each on the next free port, saying so in one line', async () => {
    await takePort(DEFAULT_OPS_PORT);
    const prefix = uniquePrefix('side-by-side');
    const file = join(dir, 'policy.yaml');
    const roles = [
      { service: startRole(['scheduler', file], prefix), started: 'scheduler started' },
      { service: startRole(['worker'], prefix), started: 'worker started' },
      { service: startRole(['start', file], prefix), started: 'scheduler started' },
    ];
    const ports: number[] = [];
    for (const { service, started } of roles) {
      const line = await opsLine(service);
      expect(line).toMatchObject({ level: WARN, msg: 'ops server listening' });
      expect(line.fallback).toMatch(/port 9464 is taken by another process.*NIGHTSHIFT_HTTP_PORT/);
      const port = Number(new URL(line.address as string).port);
      expect(DEFAULT_PORTS.slice(1)).toContain(port);
      ports.push(port);
      expect((await fetch(`${line.address}/healthz`)).status).toBe(200);
      await eventually(started, () => logLines(service).some((l) => l.msg === started), 15_000);
      expect(logLines(service).filter((l) => l.msg.startsWith('ops server'))).toHaveLength(1);
    }
    expect(new Set(ports).size).toBe(roles.length);
    for (const { service } of roles) {
      expect(service.child.exitCode, service.output()).toBeNull();
      expect((await signalGroup(service, 'SIGTERM', 15_000)).exit, service.output()).toBe(0);
    }
  }, 60_000);

  it('a role whose default ports are all taken runs without an ops server, and says so in one line', async () => {
    for (const port of DEFAULT_PORTS) await takePort(port);
    const worker = startRole(['worker'], uniquePrefix('side-by-side-off'));
    const line = await opsLine(worker);
    expect(line).toMatchObject({ level: WARN, host: '127.0.0.1', ports: '9464-9473' });
    expect(line.msg).toMatch(/^ops server off: .*NIGHTSHIFT_HTTP_PORT/);
    await eventually(
      'worker started',
      () => logLines(worker).some((l) => l.msg === 'worker started'),
      15_000,
    );
    expect(worker.child.exitCode, worker.output()).toBeNull();
    expect((await signalGroup(worker, 'SIGTERM', 15_000)).exit, worker.output()).toBe(0);
  }, 30_000);
});
