import { mkdtempSync, rmSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PolicyStore, policySha } from '../../../src/store/policy-store.js';
import { createRedis } from '../../../src/store/redis.js';
import {
  assertBuilt,
  type CliProcess,
  eventually,
  harnessKeyring,
  type LogLine,
} from '../../helpers/engine.js';
import { startTestRedis, type TestRedis, uniquePrefix } from '../../helpers/redis.js';
import { parseExposition, sampleValue } from './exposition.js';
import { killGroup, logLines, signalGroup, startService } from './service-group.js';

/** What the webhook sink received: every JSON body, in order. */
interface Receiver {
  url: string;
  bodies: Record<string, unknown>[];
  server: Server;
}

async function startReceiver(): Promise<Receiver> {
  const bodies: Record<string, unknown>[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on('end', () => {
      bodies.push(JSON.parse(text) as Record<string, unknown>);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // the path stands for the secret part of a real webhook URL
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T0-secret-path-5f1c`;
  return { url, bodies, server };
}

/** A policy whose jobs are all pauses, told to the sink `ops` (a JSON webhook at `${OPS_HOOK}`). */
function policy(jobs: string[], extra = ''): string {
  return `version: 1
notifications:
  ops:
    url: "\${OPS_HOOK}"
    format: json
    on: [failure, recovered]
jobs:
${jobs
  .map(
    (name) => `  ${name}:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    notify: [ops]
`,
  )
  .join('')}${extra}`;
}

const INVALID = policy(['alpha']).replace('"0 20 * * *"', '"61 20 * * *"');

let redis: TestRedis;
let dir: string;
let receiver: Receiver;
const services: CliProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  redis = await startTestRedis();
  receiver = await startReceiver();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-reload-obs-'));
});
afterEach(() => {
  for (const service of services.splice(0)) killGroup(service);
  receiver.bodies.length = 0;
});
afterAll(async () => {
  await redis?.stop();
  receiver?.server.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Replaces the file whole, as editors and config maps do. */
async function save(file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text);
  await rename(`${file}.tmp`, file);
}

function start(args: string[], prefix: string, extra: Record<string, string> = {}): CliProcess {
  const service = startService(args, {
    REDIS_URL: redis.url,
    NIGHTSHIFT_REDIS_PREFIX: prefix,
    NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
    NIGHTSHIFT_API_KEY: 'k',
    NIGHTSHIFT_BEARER_TOKEN: '',
    NIGHTSHIFT_LOG_FORMAT: 'json',
    OPS_HOOK: receiver.url,
    ...extra,
  });
  services.push(service);
  return service;
}

async function line(service: CliProcess, msg: string, nth = 0): Promise<LogLine> {
  return eventually(
    msg,
    () => logLines(service).filter((candidate) => candidate.msg === msg)[nth],
    15_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n--- output:\n${service.output()}`);
  });
}

async function readyz(address: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${address}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function metrics(address: string) {
  return parseExposition(await (await fetch(`${address}/metrics`)).text());
}

/** The policy notices the sink received, of one file when given. */
function notices(event: string, file?: string): Record<string, unknown>[] {
  return receiver.bodies.filter(
    (body) =>
      body.kind === 'nightshift.policy' && body.event === event && (file === undefined || body.file === file),
  );
}

describe('a rejected hot reload is visible', () => {
  it('in /metrics, in /readyz (degraded, still 200) and at the sinks, until a good edit clears it', async () => {
    const file = join(dir, 'scheduler.yaml');
    const first = policy(['alpha']);
    await save(file, first);
    const prefix = uniquePrefix('reload-obs');
    const scheduler = start(['scheduler', file], prefix);
    const client = createRedis({ url: redis.url, role: 'test' });
    const policies = new PolicyStore(client, { prefix, keyring: harnessKeyring() });
    const { address } = await line(scheduler, 'ops server listening');
    await line(scheduler, 'scheduler started');
    let samples = await metrics(address as string);
    expect(sampleValue(samples, 'nightshift_policy_info', { sha: policySha(first) })).toBe(1);
    expect(sampleValue(samples, 'nightshift_policy_reload_failures_total')).toBe(0);
    expect(sampleValue(samples, 'nightshift_policy_rejected')).toBe(0);

    await save(file, INVALID);
    const [rejected] = await eventually(
      'the sink told',
      () => notices('rejected').length > 0 && notices('rejected'),
    );
    expect(rejected).toMatchObject({
      version: 1,
      file,
      policySha: policySha(first),
      rejectedSha: policySha(INVALID),
      problemCount: 1,
      problems: [{ file, line: 9, col: 15, message: expect.stringContaining('schedule') }],
    });
    const degraded = await readyz(address as string);
    expect(degraded.status).toBe(200);
    expect(degraded.body).toMatchObject({
      ready: true,
      degraded: ['policy'],
      failing: [],
      checks: {
        redis: { ok: true },
        policy: {
          ok: true,
          degraded: true,
          reason: expect.stringMatching(
            new RegExp(
              `last edit of .*scheduler\\.yaml was rejected .*1 problem.*${policySha(first).slice(0, 12)}`,
            ),
          ),
          problems: [expect.stringMatching(/scheduler\.yaml:9:15: .*schedule/)],
        },
      },
    });
    // in Redis too, for the console: the problems about the text, no ${VAR} value among them
    const stored = await policies.rejected();
    expect(stored).toMatchObject({
      sha: policySha(INVALID),
      host: expect.any(String),
      problems: [expect.stringMatching(/scheduler\.yaml:9:15: .*schedule/)],
    });
    expect(JSON.stringify(stored)).not.toContain('T0-secret-path-5f1c');
    samples = await metrics(address as string);
    expect(sampleValue(samples, 'nightshift_policy_reload_failures_total')).toBe(1);
    expect(sampleValue(samples, 'nightshift_policy_rejected')).toBe(1);
    expect(sampleValue(samples, 'nightshift_policy_info', { sha: policySha(first) })).toBe(1);

    const second = policy(['alpha', 'beta']);
    await save(file, second);
    await eventually('the sink told of the fix', () => notices('accepted').length > 0);
    expect(notices('accepted')[0]).toMatchObject({
      policySha: policySha(second),
      rejectedSha: policySha(INVALID),
      problems: [],
    });
    expect(await readyz(address as string)).toEqual({
      status: 200,
      body: { ready: true, failing: [], checks: { redis: { ok: true }, policy: { ok: true } } },
    });
    expect(await policies.rejected()).toBeUndefined();
    await client.quit();
    samples = await metrics(address as string);
    expect(samples.filter((sample) => sample.name === 'nightshift_policy_info')).toEqual([
      { name: 'nightshift_policy_info', labels: { sha: policySha(second) }, value: 1 },
    ]);
    expect(sampleValue(samples, 'nightshift_policy_rejected')).toBe(0);
    expect(sampleValue(samples, 'nightshift_policy_reload_failures_total')).toBe(1);

    expect((await signalGroup(scheduler, 'SIGTERM', 15_000)).exit).toBe(0);
    // the webhook URL is a secret: in no log line
    expect(scheduler.output()).not.toContain('T0-secret-path-5f1c');
    expect(notices('rejected')).toHaveLength(1);
  }, 60_000);

  it('start refuses a reload adding a job that needs a variable or the bearer token it lacks, like an invalid edit', async () => {
    const file = join(dir, 'start.yaml');
    const first = policy(['alpha']);
    await save(file, first);
    const service = start(['start', file], uniquePrefix('reload-obs-start'));
    const { address } = await line(service, 'ops server listening');
    await line(service, 'scheduler started');

    // a job that lists organization users, and this process has no bearer token
    const needingToken = policy(
      ['alpha'],
      `  review:
    schedule: "0 8 1 * *"
    action: org-user-review
`,
    );
    await save(file, needingToken);
    const refused = await line(service, 'new policy is invalid; keeping the last good one');
    expect(refused.problems).toEqual([
      expect.stringMatching(
        /start\.yaml:15:13: jobs\.review\.action: .*org-user-review.*NIGHTSHIFT_BEARER_TOKEN/,
      ),
    ]);
    const [notice] = await eventually(
      'the sink told',
      () => notices('rejected', file).length > 0 && notices('rejected', file),
    );
    expect(notice).toMatchObject({ problemCount: 1, rejectedSha: policySha(needingToken) });

    // a job that reads a variable this process does not have
    await save(
      file,
      policy(
        ['alpha'],
        `  pause-more:
    schedule: "0 21 * * *"
    action: pause
    target: { workgroups: ["\${MORE_WORKGROUPS}"] }
`,
      ),
    );
    const missing = await line(service, 'new policy is invalid; keeping the last good one', 1);
    expect(missing.problems).toEqual([
      expect.stringMatching(/start\.yaml:16:28: .*MORE_WORKGROUPS is not set/),
    ]);
    expect((await readyz(address as string)).body).toMatchObject({ ready: true, degraded: ['policy'] });
    const samples = await metrics(address as string);
    expect(sampleValue(samples, 'nightshift_policy_reload_failures_total')).toBe(2);
    expect(sampleValue(samples, 'nightshift_policy_info', { sha: policySha(first) })).toBe(1);
    // the schedule is the old one: no job of the refused edit came in
    expect(logLines(service).filter((entry) => entry.msg === 'policy loaded')).toHaveLength(1);
    expect((await signalGroup(service, 'SIGTERM', 15_000)).exit).toBe(0);
  }, 60_000);

  it('two schedulers watching one file send one notice between them', async () => {
    const file = join(dir, 'replicas.yaml');
    await save(file, policy(['alpha']));
    const prefix = uniquePrefix('reload-obs-replicas');
    const replicas = [0, 1].map(() => start(['scheduler', file], prefix, { NIGHTSHIFT_LOG_LEVEL: 'debug' }));
    for (const replica of replicas) await line(replica, 'scheduler started');

    await save(file, INVALID);
    for (const replica of replicas) await line(replica, 'new policy is invalid; keeping the last good one');
    await eventually(
      'one replica sent it, the other stood back',
      () =>
        replicas.some((r) => logLines(r).some((l) => l.msg === 'policy notification sent')) &&
        replicas.some((r) =>
          logLines(r).some((l) => l.msg === 'policy notification already sent by another scheduler'),
        ),
    );
    expect(notices('rejected', file)).toHaveLength(1);
    for (const replica of replicas) expect((await signalGroup(replica, 'SIGTERM', 15_000)).exit).toBe(0);
  }, 60_000);
});

describe('a scheduler restarted on a file with problems', () => {
  it('runs the policy in force and reports the edit as rejected, instead of exiting over and over', async () => {
    const file = join(dir, 'restart.yaml');
    const prefix = uniquePrefix('restart-invalid');
    const good = policy(['alpha']);
    await save(file, good);
    const first = start(['scheduler', file], prefix);
    await line(first, 'scheduler started');
    expect((await signalGroup(first, 'SIGTERM', 15_000)).exit).toBe(0);

    await save(file, INVALID);
    const restarted = start(['scheduler', file], prefix);
    const { address } = await line(restarted, 'ops server listening');
    const fallback = await line(
      restarted,
      'policy file is invalid; running the policy in force (the last one loaded) until it is fixed',
    );
    expect(fallback.policySha).toBe(policySha(good));
    await line(restarted, 'scheduler started');
    const { status, body } = await readyz(address as string);
    expect(status).toBe(200);
    expect(body).toMatchObject({ degraded: ['policy'] });
    expect(
      sampleValue(await metrics(address as string), 'nightshift_policy_info', { sha: policySha(good) }),
    ).toBe(1);
    expect(restarted.output()).toMatch(/restart\.yaml:9:15: .*schedule/);
    // the fallback's load of the policy in force does not end the rejection recorded after it
    const client = createRedis({ url: redis.url, role: 'test' });
    expect(await new PolicyStore(client, { prefix }).rejected()).toMatchObject({ sha: policySha(INVALID) });
    await client.quit();
    expect((await signalGroup(restarted, 'SIGTERM', 15_000)).exit).toBe(0);
  });

  it('with no policy in force to run (a first start), exits 2 naming the problems', async () => {
    const file = join(dir, 'first.yaml');
    await save(file, INVALID);
    const scheduler = start(['scheduler', file], uniquePrefix('first-invalid'));
    expect(await scheduler.exited).toBe(2);
    expect(scheduler.output()).toMatch(/first\.yaml:9:15: .*schedule/);
    expect(scheduler.output()).toContain(
      'is invalid and no policy is in force in Redis to run until it is fixed',
    );
  });
});

describe('a hot reload the scheduler can load, or cannot read', () => {
  it('logs the warnings of an edit it loads, and an error when the file cannot be read, keeping the last good policy', async () => {
    const file = join(dir, 'warnings.yaml');
    const first = policy(['alpha']);
    await save(file, first);
    const scheduler = start(['scheduler', file], uniquePrefix('reload-warn'));
    await line(scheduler, 'scheduler started');

    await save(
      file,
      policy(['alpha']).replace('    action: pause', '    timezone: europe/berlin\n    action: pause'),
    );
    const loaded = await line(scheduler, 'new policy loaded, with warnings');
    expect(loaded.level).toBe(40);
    expect(loaded.warnings).toEqual([
      expect.stringMatching(/warnings\.yaml:\d+:\d+: .*"europe\/berlin" is read as "Europe\/Berlin"/),
    ]);

    rmSync(file);
    const unreadable = await line(
      scheduler,
      'policy file cannot be read (deleted, or no longer readable); keeping the last good policy',
    );
    expect(unreadable.level).toBe(50);
    expect(JSON.stringify(unreadable)).toContain('ENOENT');
  });
});
