import { afterEach, describe, expect, it } from 'vitest';
import { settingsFrom, UsageError } from '../../../src/cli/exit.js';
import { opsSettings } from '../../../src/cli/ops.js';
import { actionApiClient } from '../../../src/cli/runtime.js';
import {
  Metrics,
  type OpsServer,
  OpsServerError,
  type OpsServerOptions,
  startOpsServer,
} from '../../../src/ops/index.js';
import { createRunQueue, scheduledRunId } from '../../../src/queue/run-queue.js';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { createRedis } from '../../../src/store/redis.js';
import {
  activeFleet,
  captureLog,
  type Engine,
  eventually,
  secondsCron,
  useEngineHarness,
} from '../../helpers/engine.js';
import { expectSecurityHeaders } from '../../helpers/ops-headers.js';
import { startTestRedis } from '../../helpers/redis.js';
import { parseExposition, sampleValue } from './exposition.js';

const FLEET = { workgroups: 2, workspacesPerWorkgroup: 2 };

/** The first workgroup enforces an allow list that does not admit this machine: check-ip finds it. */
function fleetState() {
  const state = activeFleet(FLEET);
  state.workgroups.forEach((workgroup, index) => {
    workgroup.enable_allow_list = index === 0;
    workgroup.allow_list = index === 0 ? [{ cidr: '203.0.113.5/32', id: 'al-office', note: 'office' }] : [];
  });
  return state;
}

const harness = useEngineHarness(FLEET, { state: fleetState() });

const TOKEN = 'ops-test-token-7c2f';

const policy = (cron: string) => `version: 1
jobs:
  nightly-pause:
    schedule: "${cron}"
    action: pause
    target: { workgroups: ["*"] }
  reachability:
    schedule: "0 6 * * *"
    action: check-ip
    target: { workgroups: ["*"] }
`;

const servers: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(engine: Engine, options: Partial<OpsServerOptions> = {}): Promise<OpsServer> {
  await engine.redis.ping();
  const server = await startOpsServer({
    port: 0,
    redis: engine.redis,
    queue: engine.queue,
    metrics: new Metrics({ queue: engine.queue, log: engine.log }),
    log: engine.log,
    ...options,
  });
  servers.push(server);
  return server;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

describe('health probes', () => {
  it('/healthz answers 200 and /readyz 200 while Redis answers', async () => {
    const server = await serve(harness.engine('ops-health'));
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, failing: [], checks: { redis: { ok: true } } });
  });

  it('/readyz answers 503 naming redis once Redis is gone, while /healthz and /metrics still answer', async () => {
    const engine = harness.engine('ops-redis-down');
    const own = await startTestRedis();
    const redis = createRedis({ url: own.url, role: 'test' });
    const queue = createRunQueue({ connection: redis, prefix: engine.prefix });
    // the outage is the point here; its connection errors are not news
    queue.on('error', () => undefined);
    const { log, lines } = captureLog('debug');
    try {
      await queue.waitUntilReady();
      const server = await serve(engine, {
        redis,
        queue,
        metrics: new Metrics({ queue, log, queueTimeoutMs: 300, processMetrics: false }),
        log,
        redisTimeoutMs: 300,
      });
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const before = await (await fetch(`${server.url}/metrics`)).text();
      expect(sampleValue(parseExposition(before), 'nightshift_queue_jobs', { state: 'waiting' })).toBe(0);

      await own.stop();
      const down = await eventually('readyz 503', async () => {
        const response = await fetch(`${server.url}/readyz`);
        return response.status === 503 ? response : undefined;
      });
      const body = (await down.json()) as {
        ready: boolean;
        failing: string[];
        checks: Record<string, unknown>;
      };
      expect(body.ready).toBe(false);
      expect(body.failing).toEqual(['redis']);
      expect(body.checks.redis).toMatchObject({ ok: false, reason: expect.any(String) });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

      // the scrape goes on without the queue depth, and says why in the log, once
      for (let scrape = 0; scrape < 2; scrape++) {
        const metrics = await fetch(`${server.url}/metrics`);
        expect(metrics.status).toBe(200);
        const text = await metrics.text();
        expect(text).toContain('# TYPE nightshift_queue_jobs gauge');
        expect(sampleValue(parseExposition(text), 'nightshift_queue_jobs')).toBeUndefined();
        expect(sampleValue(parseExposition(text), 'nightshift_runs_total')).toBeUndefined();
      }
      const warnings = lines.filter((line) => line.msg === 'queue depth not read: scrape goes on without it');
      expect(warnings.map((line) => line.level)).toEqual([40, 20]);
    } finally {
      redis.disconnect();
      await queue.close().catch(() => undefined);
      await own.stop();
    }
  });

  it('/readyz answers 503 naming the policy until the scheduler has loaded one', async () => {
    let loaded = false;
    const server = await serve(harness.engine('ops-policy'), {
      ready: () => ({ policy: loaded ? { ok: true } : { ok: false, reason: 'policy.yaml not loaded yet' } }),
    });
    const before = await fetch(`${server.url}/readyz`);
    expect(before.status).toBe(503);
    expect(await before.json()).toEqual({
      ready: false,
      failing: ['policy'],
      checks: { redis: { ok: true }, policy: { ok: false, reason: 'policy.yaml not loaded yet' } },
    });
    loaded = true;
    const after = await fetch(`${server.url}/readyz`);
    expect(after.status).toBe(200);
    expect(await after.json()).toMatchObject({ ready: true, checks: { policy: { ok: true } } });
  });
});

describe('/metrics', () => {
  it('counts runs, targets, findings, schedule lag, API calls and queue depth of real runs, with bounded labels', async () => {
    const engine = harness.engine('ops-metrics');
    const metrics = new Metrics({ queue: engine.queue, log: engine.log });
    // the worker's client as `nightshift worker` builds it: every call logged and counted
    const api = actionApiClient(
      settingsFrom({}),
      { baseUrl: harness.sim.url, apiKey: DEFAULT_API_KEY, bearerToken: undefined },
      engine.log,
      undefined,
      metrics,
    );
    try {
      const since = harness.sim.requests().at(-1)?.seq ?? 0;
      engine.worker(harness.sim.url, { api, metrics });
      const { cron, ticks } = secondsCron([0]);
      const text = policy(cron);
      const scheduler = engine.scheduler();
      await scheduler.load(engine.parse(text), text);
      await scheduler.start();
      const scheduledId = scheduledRunId('nightly-pause', ticks[0] as Date);
      const paused = await engine.waitForRun(scheduledId);
      await scheduler.stop();
      const auditId = await engine.enqueue(text, 'reachability');
      const audited = await engine.waitForRun(auditId);
      expect(paused).toMatchObject({ outcome: 'succeeded', trigger: 'schedule', counts: { succeeded: 4 } });
      expect(audited).toMatchObject({ outcome: 'succeeded', counts: { succeeded: 1, skipped: 1 } });
      expect(audited.findings.map((finding) => finding.rule)).toEqual(['allow-list/runner-blocked']);
      await eventually(
        'both runs completed in BullMQ',
        async () => (await engine.queue.getJobCounts('completed')).completed === 2,
      );

      const server = await serve(engine, { metrics });
      const response = await fetch(`${server.url}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const exposition = await response.text();
      const samples = parseExposition(exposition);

      expect(
        sampleValue(samples, 'nightshift_runs_total', {
          job: 'nightly-pause',
          action: 'pause',
          outcome: 'succeeded',
        }),
      ).toBe(1);
      expect(
        sampleValue(samples, 'nightshift_runs_total', {
          job: 'reachability',
          action: 'check-ip',
          outcome: 'succeeded',
        }),
      ).toBe(1);
      expect(
        sampleValue(samples, 'nightshift_targets_total', { action: 'pause', outcome: 'succeeded' }),
      ).toBe(4);
      expect(
        sampleValue(samples, 'nightshift_targets_total', { action: 'check-ip', outcome: 'succeeded' }),
      ).toBe(1);
      expect(
        sampleValue(samples, 'nightshift_targets_total', { action: 'check-ip', outcome: 'skipped' }),
      ).toBe(1);
      expect(
        sampleValue(samples, 'nightshift_findings_total', {
          job: 'reachability',
          rule: 'allow-list/runner-blocked',
          severity: 'warning',
        }),
      ).toBe(1);
      // the scheduled run's lag only: a manual run has no tick to be late for
      expect(sampleValue(samples, 'nightshift_schedule_lag_seconds_count')).toBe(1);
      const lag = sampleValue(samples, 'nightshift_schedule_lag_seconds_sum') as number;
      expect(lag).toBeGreaterThanOrEqual(0);
      expect(lag).toBeLessThan(10);

      // every API call the simulator answered, by operation and status
      const answered = harness.sim
        .requests(since)
        .filter((entry) => entry.operation === 'pauseWorkspace' || entry.operation === 'checkCurrentIp');
      for (const operation of ['pauseWorkspace', 'checkCurrentIp']) {
        const calls = answered.filter((entry) => entry.operation === operation);
        expect(calls.length).toBeGreaterThan(0);
        for (const status of new Set(calls.map((entry) => String(entry.status))))
          expect(
            sampleValue(samples, 'nightshift_api_calls_total', { operation, status }),
            `${operation} ${status}`,
          ).toBe(calls.filter((entry) => String(entry.status) === status).length);
        expect(sampleValue(samples, 'nightshift_api_call_duration_seconds_count', { operation })).toBe(
          calls.length,
        );
      }
      expect(
        sampleValue(samples, 'nightshift_api_calls_total', { operation: 'listWorkgroups' }),
      ).toBeGreaterThan(0);
      // and the same calls still reach the log, one line each
      expect(engine.lines('api call').filter((line) => line.operation === 'pauseWorkspace')).toHaveLength(4);

      expect(sampleValue(samples, 'nightshift_queue_jobs', { state: 'completed' })).toBe(2);
      expect(sampleValue(samples, 'nightshift_queue_jobs', { state: 'waiting' })).toBe(0);
      expect(sampleValue(samples, 'nightshift_queue_jobs', { state: 'failed' })).toBe(0);
      // Node's own process metrics come along
      expect(sampleValue(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);

      // no label carries a run id, a target id, a request id or a message: each is a name or a small set
      const unbounded = [
        scheduledId,
        auditId,
        ...harness.sim.state.workspaces.map((ws) => ws.workspace_id),
        ...harness.sim.state.workgroups.map((wg) => wg.workgroup_id),
        ...paused.targets.flatMap((target) => target.requestIds),
      ];
      for (const value of unbounded) expect(exposition).not.toContain(value);
      const allowed: Record<string, RegExp> = {
        job: /^(nightly-pause|reachability)$/,
        action: /^(pause|check-ip)$/,
        outcome: /^(succeeded|partial|failed|skipped|missed|planned)$/,
        rule: /^allow-list\/runner-blocked$/,
        severity: /^(info|warning|critical)$/,
        operation: /^[a-z][a-zA-Z]+$/,
        status: /^(\d{3}|network|timeout|aborted|error)$/,
        state: /^(waiting|active|delayed|prioritized|completed|failed)$/,
        le: /^(\d+(\.\d+)?|\+Inf)$/,
      };
      for (const sample of samples.filter((candidate) => candidate.name.startsWith('nightshift_')))
        for (const [label, value] of Object.entries(sample.labels))
          expect(value, `${sample.name} ${label}`).toMatch(allowed[label] ?? /^$/);
    } finally {
      await api.close();
    }
  });

  it('each Metrics has its own registry, so two never share a count', async () => {
    const first = new Metrics({ processMetrics: false });
    const second = new Metrics({ processMetrics: false });
    first.apiCall({
      operation: 'listWorkgroups',
      method: 'GET',
      path: '/',
      status: 200,
      requestId: 'r1',
      durationMs: 12,
    });
    expect(await first.registry.getSingleMetricAsString('nightshift_api_calls_total')).toContain(
      'nightshift_api_calls_total{operation="listWorkgroups",status="200"} 1',
    );
    expect(await second.registry.getSingleMetricAsString('nightshift_api_calls_total')).not.toContain(
      'listWorkgroups',
    );
  });
});

describe('the token', () => {
  it('guards /metrics and the dashboard (401 without, 200 with bearer or basic), each answer never framed or sniffed; never the probes', async () => {
    const { log, lines } = captureLog('debug');
    const server = await serve(harness.engine('ops-token'), { token: TOKEN, log });

    for (const path of ['/metrics', '/ui', '/ui/api/queues', '/ui/static/images/logo.svg']) {
      const refused = await fetch(`${server.url}${path}`);
      expect(refused.status, path).toBe(401);
      // a browser prompts for it
      expect(refused.headers.get('www-authenticate')).toMatch(/^Basic realm="nightshift"/);
      expect(await refused.text()).not.toContain(TOKEN);
      expect((await fetch(`${server.url}${path}`, { headers: bearer('wrong-token') })).status, path).toBe(
        401,
      );
      expect(
        (await fetch(`${server.url}${path}`, { headers: basic('ops', 'wrong-token') })).status,
        path,
      ).toBe(401);
      expect((await fetch(`${server.url}${path}`, { headers: basic(TOKEN, '') })).status, path).toBe(401);
      const allowed = await fetch(`${server.url}${path}`, { headers: bearer(TOKEN) });
      expect(allowed.status, path).toBe(200);
      for (const answer of [refused, allowed]) {
        expectSecurityHeaders((name) => answer.headers.get(name), path);
      }
      expect((await fetch(`${server.url}${path}`, { headers: basic('ops', TOKEN) })).status, path).toBe(200);
      expect((await fetch(`${server.url}${path}`, { headers: basic('', TOKEN) })).status, path).toBe(200);
    }
    const queues = (await (
      await fetch(`${server.url}/ui/api/queues`, { headers: bearer(TOKEN) })
    ).json()) as {
      queues: { name: string; readOnlyMode: boolean }[];
    };
    expect(queues.queues.map((queue) => [queue.name, queue.readOnlyMode])).toEqual([['runs', true]]);
    // read-only: the dashboard cannot pause the queue (nor retry, clean or add)
    const pause = await fetch(`${server.url}/ui/api/queues/runs/pause`, {
      method: 'PUT',
      headers: bearer(TOKEN),
    });
    expect(pause.status).toBe(405);

    for (const path of ['/healthz', '/readyz'])
      expect((await fetch(`${server.url}${path}`)).status).toBe(200);

    // refusals are logged (debug), without what was presented
    expect(lines.filter((line) => line.msg === 'ops request refused: no valid token').length).toBeGreaterThan(
      0,
    );
    for (const line of lines) expect(JSON.stringify(line)).not.toContain(TOKEN);
  });

  it('is not needed on a loopback bind without one', async () => {
    const server = await serve(harness.engine('ops-open'), { host: '127.0.0.1' });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${server.url}/ui`)).status).toBe(200);
    expect((await fetch(`${server.url}/ui/api/queues`)).status).toBe(200);
  });

  it('is required on any other bind: the server refuses to start without one', async () => {
    const engine = harness.engine('ops-refused');
    for (const host of ['0.0.0.0', '::', '192.0.2.10']) {
      const refused = serve(engine, { host });
      await expect(refused).rejects.toBeInstanceOf(OpsServerError);
      await expect(refused).rejects.toMatchObject({
        code: 'NS_OPS_TOKEN_REQUIRED',
        message: expect.stringContaining('NIGHTSHIFT_UI_TOKEN'),
      });
    }
    const open = await serve(engine, { host: '0.0.0.0', token: TOKEN });
    const port = new URL(open.url).port;
    expect(open.url).toBe(`http://0.0.0.0:${port}`);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: bearer(TOKEN) })).status).toBe(200);
  });
});

describe('settings from the environment', () => {
  it('defaults to 127.0.0.1:9464 (or the next free port to 9473) without a token; 0 is a free port; off turns the server off', () => {
    expect(opsSettings(settingsFrom({}))).toEqual({
      host: '127.0.0.1',
      port: 9464,
      fallbackPorts: 9,
      token: undefined,
    });
    expect(opsSettings(settingsFrom({ NIGHTSHIFT_HTTP_PORT: '0' }))).toMatchObject({
      port: 0,
      fallbackPorts: 0,
    });
    // set explicitly, even to the default: no other port will do
    expect(opsSettings(settingsFrom({ NIGHTSHIFT_HTTP_PORT: '9464' }))).toMatchObject({
      port: 9464,
      fallbackPorts: 0,
    });
    expect(opsSettings(settingsFrom({ NIGHTSHIFT_HTTP_PORT: 'off' }))).toBeUndefined();
    expect(
      opsSettings(settingsFrom({ NIGHTSHIFT_HTTP_HOST: '0.0.0.0', NIGHTSHIFT_UI_TOKEN: TOKEN })),
    ).toEqual({
      host: '0.0.0.0',
      port: 9464,
      fallbackPorts: 9,
      token: TOKEN,
    });
  });

  it('refuses (exit 2) a bad port, and a non-loopback host without NIGHTSHIFT_UI_TOKEN', () => {
    for (const port of ['abc', '-1', '70000', '1.5'])
      expect(() => opsSettings(settingsFrom({ NIGHTSHIFT_HTTP_PORT: port }))).toThrow(UsageError);
    expect(() => opsSettings(settingsFrom({ NIGHTSHIFT_HTTP_PORT: 'abc' }))).toThrow(/NIGHTSHIFT_HTTP_PORT/);
    expect(() => opsSettings(settingsFrom({ NIGHTSHIFT_HTTP_HOST: '0.0.0.0' }))).toThrow(UsageError);
    expect(() => opsSettings(settingsFrom({ NIGHTSHIFT_HTTP_HOST: '0.0.0.0' }))).toThrow(
      /NIGHTSHIFT_UI_TOKEN/,
    );
  });
});
