// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import type { RunSummary } from '../../../src/engine/index.js';
import { createLogger, type Logger } from '../../../src/log/logger.js';
import {
  Notifier,
  type NotifierOptions,
  RedisNotificationMemory,
  type RunPayload,
  type SlackMessage,
} from '../../../src/notify/index.js';
import { createActionCatalog, type Policy, type PolicyJob, parsePolicy } from '../../../src/policy/index.js';
import { redisKeys } from '../../../src/store/keys.js';
import { freePort } from '../../../src/store/local-server.js';
import { createRedis } from '../../../src/store/redis.js';
import { startTestRedis, type TestRedis, uniquePrefix } from '../../helpers/redis.js';
import { finding, runSummary } from '../../helpers/summaries.js';

/** Where the webhooks live on the receiver: a path that reads like the secret a real one holds. */
const SECRET_PATH = '/services/T0NIGHT/B0SHIFT/xq7Vw3s3cr3tW3bh00kT0k3n';

let redisServer: TestRedis;
let redis: Redis;
let receiver: ScriptedServer;
const notifiers: Notifier[] = [];

beforeAll(async () => {
  [redisServer, receiver] = await Promise.all([startTestRedis(), startScriptedServer()]);
  redis = createRedis({ url: redisServer.url, role: 'test' });
  receiver.replyJson(200, { ok: true });
});

afterEach(async () => {
  await Promise.all(notifiers.splice(0).map((notifier) => notifier.close()));
  receiver.requests.length = 0;
  receiver.replyJson(200, { ok: true });
});

afterAll(async () => {
  await receiver.close();
  await redis.quit();
  await redisServer.stop();
});

/** An action for the policy to name; the notifier never looks at it. */
const registry = createActionCatalog([
  {
    name: 'audit',
    description: 'Test only: reports findings.',
    destructive: false,
    scope: 'none',
    params: z.strictObject({}),
  },
]);

/** A policy with sinks `ops` (json, every event), `chat` (slack, failures) and `down`, as the loader reads it. */
async function setup(options: Partial<NotifierOptions> = {}) {
  const downUrl = `http://127.0.0.1:${await freePort()}${SECRET_PATH}-down`;
  const policy = parsePolicy(
    `version: 1
notifications:
  ops: { url: "\${OPS_WEBHOOK}", on: [failure, partial, stranded, findings, recovered], timeout: 1s }
  chat: { url: "\${CHAT_WEBHOOK}", format: slack }
  down: { url: "\${DOWN_WEBHOOK}", on: [findings], timeout: 1s }
jobs:
  audit: { schedule: "0 6 * * *", action: audit, notify: [ops] }
  both: { schedule: "0 6 * * *", action: audit, notify: [ops, chat] }
  broken: { schedule: "0 6 * * *", action: audit, notify: [down] }
`,
    'policy.yaml',
    {
      registry,
      env: {
        OPS_WEBHOOK: `${receiver.url}${SECRET_PATH}-ops`,
        CHAT_WEBHOOK: `${receiver.url}${SECRET_PATH}-chat`,
        DOWN_WEBHOOK: downUrl,
      },
    },
  );
  const lines: string[] = [];
  const log: Logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => lines.push(line) },
  });
  const prefix = uniquePrefix('notify');
  const memory = new RedisNotificationMemory(redis, { prefix });
  const notifier = new Notifier({ memory, log, backoffMs: 20, maxDelayMs: 3_000, ...options });
  notifiers.push(notifier);
  const job = (name: string): PolicyJob => {
    const found = policy.jobs.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no job ${name}`);
    return found;
  };
  const run = (summary: RunSummary, name = summary.job) =>
    notifier.notify(policy.notifications, job(name), summary);
  return { policy, notifier, memory, prefix, lines, run, downUrl };
}

const bodies = <T = RunPayload>() => receiver.requests.map((request) => JSON.parse(request.body) as T);

const A = finding('open-to-world', 'wg-1', 'critical');
const B = finding('open-to-world', 'wg-2');
const C = finding('stale-entry', 'wg-3');

describe('findings are sent once, then only what changed', () => {
  it('sends the first run’s findings, nothing for the same findings again, then the new and the resolved', async () => {
    const { run } = await setup();

    expect(await run(runSummary({ findings: [A, B] }))).toEqual([
      { sink: 'ops', result: 'sent', events: ['findings'], attempts: 1 },
    ]);
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]?.url).toBe(`${SECRET_PATH}-ops`);
    expect(receiver.requests[0]?.headers['content-type']).toBe('application/json');
    expect(bodies()[0]).toMatchObject({
      kind: 'nightshift.run',
      events: ['findings'],
      job: 'audit',
      outcome: 'succeeded',
      findings: { open: 2, new: 2, resolved: 0 },
      newFindings: [A, B],
      resolvedFindings: [],
    });

    expect(await run(runSummary({ findings: [B, { ...A, message: 'still open' }] }))).toEqual([
      { sink: 'ops', result: 'quiet', events: [] },
    ]);
    expect(receiver.requests).toHaveLength(1);

    await run(runSummary({ findings: [A, C] }));
    expect(receiver.requests).toHaveLength(2);
    expect(bodies()[1]).toMatchObject({
      events: ['findings'],
      findings: { open: 2, new: 1, resolved: 1 },
      newFindings: [C],
      resolvedFindings: [B],
    });
  });

  it('keeps each job’s and each sink’s memory apart', async () => {
    const { run } = await setup();
    await run(runSummary({ findings: [A] }));
    await run(runSummary({ job: 'both', findings: [A] }));
    // `both` is a different job, so `ops` hears about A again; `chat` does not listen to findings.
    expect(bodies().map((body) => body.job)).toEqual(['audit', 'both']);
  });
});

describe('recovered', () => {
  it('is sent when a run succeeds after a failed one, after the failure itself', async () => {
    const { run } = await setup();
    await run(runSummary({ failed: 2, succeeded: 0, reason: 'every target failed' }));
    await run(runSummary());
    await run(runSummary());
    expect(bodies().map((body) => [body.events, body.outcome, body.previousOutcome])).toEqual([
      [['failure'], 'failed', null],
      [['recovered'], 'succeeded', 'failed'],
    ]);
  });
});

describe('formats and filters', () => {
  it('gives each sink its own format and only the events it listens to', async () => {
    const { run } = await setup();
    const reports = await run(runSummary({ job: 'both', failed: 1, findings: [A] }));
    expect(reports).toEqual([
      { sink: 'ops', result: 'sent', events: ['partial', 'findings'], attempts: 1 },
      { sink: 'chat', result: 'sent', events: ['partial'], attempts: 1 },
    ]);
    const slack = receiver.requests.find((request) => request.url.endsWith('-chat'));
    const message = JSON.parse(slack?.body ?? '{}') as SlackMessage;
    expect(message.text).toBe('nightshift: both partly failed: 1 of 3 targets failed');
    // chat does not listen to findings: its message lists none
    expect(JSON.stringify(message.blocks)).not.toContain('New findings');
  });

  it('never notifies about a dry run, and does not remember it', async () => {
    const { run, memory } = await setup();
    expect(await run(runSummary({ dryRun: true, failed: 2, succeeded: 0, findings: [A] }))).toEqual([]);
    expect(receiver.requests).toHaveLength(0);
    expect(await memory.get('audit', 'ops')).toBeUndefined();
  });

  it('sends a run delivered twice (a worker retry) only once', async () => {
    const { run } = await setup();
    const summary = runSummary({ failed: 2, succeeded: 0 });
    await run(summary);
    expect(await run(summary)).toEqual([{ sink: 'ops', result: 'unchanged', events: [] }]);
    expect(receiver.requests).toHaveLength(1);
  });
});

describe('retries', () => {
  it('delivers to a sink that answers 500 twice, then 200', async () => {
    const { run, lines } = await setup();
    let calls = 0;
    receiver.reply((_req, res) => {
      calls++;
      res.writeHead(calls <= 2 ? 500 : 200, { 'content-type': 'text/plain' });
      res.end(calls <= 2 ? 'upstream hiccup' : 'ok');
    });
    expect(await run(runSummary({ failed: 2, succeeded: 0 }))).toEqual([
      { sink: 'ops', result: 'sent', events: ['failure'], attempts: 3 },
    ]);
    expect(receiver.requests).toHaveLength(3);
    expect(new Set(receiver.requests.map((request) => request.body)).size).toBe(1);
    const retries = lines.map((line) => JSON.parse(line)).filter((line) => line.msg.includes('retrying'));
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatchObject({ sink: 'ops', status: 500, attempt: 1 });
  });

  it('waits as long as Retry-After asks on a 429', async () => {
    const { run } = await setup();
    const at: number[] = [];
    receiver.reply((_req, res) => {
      at.push(Date.now());
      if (at.length === 1) res.writeHead(429, { 'retry-after': '1' }).end();
      else res.writeHead(200).end('ok');
    });
    expect((await run(runSummary({ failed: 2, succeeded: 0 })))[0]?.result).toBe('sent');
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('gives up at once on a Retry-After longer than it may wait, and on a 4xx', async () => {
    const { run } = await setup();
    receiver.reply((_req, res) => res.writeHead(503, { 'retry-after': '3600' }).end());
    expect((await run(runSummary({ failed: 2, succeeded: 0 })))[0]).toMatchObject({
      result: 'failed',
      attempts: 1,
    });
    receiver.reply((_req, res) => res.writeHead(404).end('no_service'));
    expect((await run(runSummary({ failed: 2, succeeded: 0 })))[0]).toMatchObject({
      result: 'failed',
      attempts: 1,
    });
    expect(receiver.requests).toHaveLength(2);
  });

  it('stops after its attempts when the sink never answers in time', async () => {
    const { run, lines } = await setup({ attempts: 2 });
    receiver.reply(() => {
      // never answers
    });
    const started = Date.now();
    expect((await run(runSummary({ failed: 2, succeeded: 0 })))[0]).toMatchObject({
      result: 'failed',
      attempts: 2,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * 1_000 - 100);
    const failure = lines.map((line) => JSON.parse(line)).find((line) => line.level === 50);
    expect(failure).toMatchObject({ sink: 'ops', code: 'WEBHOOK_TIMEOUT', attempts: 2 });
  });
});

describe('a sink that is down', () => {
  it('never fails the run: notify resolves, the error names the sink, no log line holds its URL', async () => {
    const { run, lines, downUrl, prefix } = await setup();
    const reports = await run(runSummary({ job: 'broken', findings: [A] }));
    expect(reports).toEqual([{ sink: 'down', result: 'failed', events: ['findings'], attempts: 4 }]);

    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const error = logged.find((line) => line.level === 50);
    expect(error).toMatchObject({
      sink: 'down',
      job: 'broken',
      code: 'WEBHOOK_NETWORK',
      msg: 'notification not sent; the next run tries again',
    });
    expect(String(error?.reason)).toContain('ECONNREFUSED');
    expect(logged.filter((line) => line.level === 40)).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toContain(SECRET_PATH);
      expect(line).not.toContain('xq7Vw3s3cr3tW3bh00kT0k3n');
      expect(line).not.toContain(downUrl);
    }
    // nor does Redis
    const keys = await redis.keys(`{${prefix}}:*`);
    for (const key of keys) {
      expect(key).not.toContain(SECRET_PATH);
      expect((await redis.get(key)) ?? '').not.toContain(SECRET_PATH);
    }
  });

  it('gets the same findings on the next run, once it is back: memory moves on only after a send', async () => {
    const { run, policy, notifier, memory } = await setup();
    await run(runSummary({ job: 'broken', findings: [A] }));
    expect(await memory.get('broken', 'down')).toBeUndefined();

    // the sink comes back: the same policy, with `down` now pointing at the receiver
    const back: Policy['notifications'] = {
      ...policy.notifications,
      down: {
        ...(policy.notifications.down as Policy['notifications'][string]),
        url: `${receiver.url}${SECRET_PATH}`,
      },
    };
    const job = policy.jobs.find((candidate) => candidate.name === 'broken') as PolicyJob;
    await notifier.notify(back, job, runSummary({ job: 'broken', findings: [A, B] }));
    expect(bodies()).toHaveLength(1);
    expect(bodies()[0]?.newFindings).toEqual([A, B]);
    expect((await memory.get('broken', 'down'))?.findings).toEqual([A, B]);
  });

  it('resolves when Redis cannot be reached, and logs that the sink was skipped', async () => {
    const { policy } = await setup();
    const unreachable = createRedis({
      url: `redis://127.0.0.1:${await freePort()}`,
      role: 'test',
      maxRetriesPerRequest: 1,
    });
    const lines: string[] = [];
    const notifier = new Notifier({
      memory: new RedisNotificationMemory(unreachable, { prefix: uniquePrefix('notify') }),
      log: createLogger({ destination: { write: (line: string) => lines.push(line) } }),
    });
    notifiers.push(notifier);
    const job = policy.jobs.find((candidate) => candidate.name === 'audit') as PolicyJob;
    expect(await notifier.notify(policy.notifications, job, runSummary({ failed: 2, succeeded: 0 }))).toEqual(
      [{ sink: 'ops', result: 'failed', events: [] }],
    );
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual([
      'notification skipped: it could not be prepared',
    ]);
    unreachable.disconnect();
  });
});

describe('RedisNotificationMemory', () => {
  it('keeps its state under the engine’s prefix, with a TTL, and never lets an older run overwrite a newer one', async () => {
    const prefix = uniquePrefix('notify');
    const memory = new RedisNotificationMemory(redis, { prefix, ttlMs: 60_000 });
    const newer = { runId: 'r2', at: '2026-03-27T20:00:02.000Z', outcome: 'failed' as const, findings: [A] };
    await memory.set('audit', 'ops', newer);
    await memory.set('audit', 'ops', {
      runId: 'r1',
      at: '2026-03-27T20:00:01.000Z',
      outcome: 'succeeded',
      findings: [],
    });
    expect(await memory.get('audit', 'ops')).toEqual(newer);
    const key = redisKeys(prefix).notifyState('audit', 'ops');
    expect(key).toBe(`{${prefix}}:notify:audit:ops`);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('reads a state it cannot parse as none', async () => {
    const prefix = uniquePrefix('notify');
    await redis.set(redisKeys(prefix).notifyState('audit', 'ops'), '{"runId":1}');
    expect(await new RedisNotificationMemory(redis, { prefix }).get('audit', 'ops')).toBeUndefined();
  });
});
