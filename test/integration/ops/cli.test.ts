import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import {
  assertBuilt,
  type CliProcess,
  eventually,
  logged,
  logLines,
  startCli,
  useEngineHarness,
} from '../../helpers/engine.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 2 });

const TOKEN = 'ops-cli-token-93e0';

const POLICY = `version: 1
jobs:
  evening-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-ops-cli-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function env(prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: harness.server.url,
    NIGHTSHIFT_REDIS_PREFIX: prefix,
    NIGHTSHIFT_API_URL: harness.sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_HTTP_PORT: '0',
    NIGHTSHIFT_LOG_FORMAT: 'json',
    NIGHTSHIFT_POLL_INTERVAL_MS: '100',
    ...extra,
  };
}

/** The address the process logged for its ops server. */
async function opsAddress(cli: CliProcess): Promise<string> {
  return (await logged(cli, 'ops server listening')).address as string;
}

describe('the ops server of the CLI', () => {
  it('nightshift worker with NIGHTSHIFT_HTTP_PORT=0 logs its URL once, answers /healthz, and counts its runs', async () => {
    const engine = harness.engine('ops-cli-worker');
    const worker = startCli(['worker'], env(engine.prefix, { NIGHTSHIFT_UI_TOKEN: TOKEN }));
    try {
      const address = await opsAddress(worker);
      expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(Number(new URL(address).port)).toBeGreaterThan(0);

      const health = await fetch(`${address}/healthz`);
      expect(health.status).toBe(200);
      // a worker has no policy to load: Redis is all it needs
      const ready = await eventually('ready', async () => {
        const response = await fetch(`${address}/readyz`);
        return response.status === 200 ? response : undefined;
      });
      expect(await ready.json()).toEqual({ ready: true, failing: [], checks: { redis: { ok: true } } });
      expect((await fetch(`${address}/metrics`)).status).toBe(401);

      const runId = await engine.enqueue(POLICY, 'evening-pause');
      expect(await engine.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
      const metrics = await (
        await fetch(`${address}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).text();
      expect(metrics).toContain(
        'nightshift_runs_total{job="evening-pause",action="pause",outcome="succeeded"} 1',
      );
      expect(metrics).toMatch(/nightshift_api_calls_total\{operation="pauseWorkspace",status="2\d\d"\} 2/);
      expect(metrics).toMatch(/nightshift_queue_jobs\{state="waiting"\} 0/);
    } finally {
      expect(await worker.stop('SIGTERM')).toBe(0);
    }
    const lines = logLines(worker);
    expect(lines.filter((line) => line.msg === 'ops server listening')).toHaveLength(1);
    expect(lines.find((line) => line.msg === 'ops server listening')).toMatchObject({ auth: 'token' });
    expect(worker.output()).not.toContain(TOKEN);
  });

  it('nightshift start: /readyz reports the policy loaded', async () => {
    const engine = harness.engine('ops-cli-start');
    const file = join(dir, 'start.yaml');
    writeFileSync(file, POLICY);
    const start = startCli(['start', file], env(engine.prefix));
    try {
      const address = await opsAddress(start);
      const ready = await eventually('ready', async () => {
        const response = await fetch(`${address}/readyz`);
        return response.status === 200 ? response : undefined;
      });
      expect(await ready.json()).toEqual({
        ready: true,
        failing: [],
        checks: { redis: { ok: true }, policy: { ok: true } },
      });
      // loopback without a token: open
      expect((await fetch(`${address}/metrics`)).status).toBe(200);
    } finally {
      expect(await start.stop('SIGTERM')).toBe(0);
    }
  });

  it('refuses to start (exit 2) on a non-loopback host without NIGHTSHIFT_UI_TOKEN', async () => {
    const engine = harness.engine('ops-cli-refused');
    const worker = startCli(['worker'], env(engine.prefix, { NIGHTSHIFT_HTTP_HOST: '0.0.0.0' }));
    expect(await worker.exited).toBe(2);
    expect(worker.output()).toContain('NIGHTSHIFT_UI_TOKEN');
    expect(worker.output()).not.toContain('worker started');
  });

  it('exits 2 naming NIGHTSHIFT_HTTP_PORT when the port is taken, before taking any run', async () => {
    const engine = harness.engine('ops-cli-taken');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const worker = startCli(['worker'], env(engine.prefix, { NIGHTSHIFT_HTTP_PORT: String(port) }));
      expect(await worker.exited).toBe(2);
      expect(worker.output()).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
      expect(worker.output()).toContain('NIGHTSHIFT_HTTP_PORT');
      expect(worker.output()).not.toContain('worker started');
    } finally {
      taken.close();
    }
  });

  it('NIGHTSHIFT_HTTP_PORT=off runs the worker without an ops server', async () => {
    const engine = harness.engine('ops-cli-off');
    const worker = startCli(['worker'], env(engine.prefix, { NIGHTSHIFT_HTTP_PORT: 'off' }));
    try {
      await eventually('worker started', () =>
        logLines(worker).some((line) => line.msg === 'worker started'),
      );
      expect(logLines(worker).map((line) => line.msg)).toContain('ops server off (NIGHTSHIFT_HTTP_PORT=off)');
      expect(logLines(worker).map((line) => line.msg)).not.toContain('ops server listening');
    } finally {
      expect(await worker.stop('SIGTERM')).toBe(0);
    }
  });
});
