// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import type { RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_API_KEY, type SimulatorHandle, startSimulator } from '../../../src/sim/index.js';
import { activeDrillFleet } from '../../helpers/drill-fleet.js';
import { assertBuilt, type CliProcess, eventually, startCli } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis, uniquePrefix } from '../../helpers/redis.js';
import { killGroup, logLines, signalGroup, startService } from '../ops/service-group.js';

// Distinctive values, so a leak cannot hide behind a common substring.
const API_KEY_VALUE = 'k-Vd83pQm2';
const TEAM_TOKEN = 'tt-Wq4Rz7Ls9';
const WEBHOOK_PATH = '/hooks/T0-Jm5Xc2Pa8';

let dir: string;
let redis: TestRedis;
let sim: SimulatorHandle;
let hooks: ScriptedServer;
let backupId: string;
const services: CliProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-policy-variables-'));
  const fleet = activeDrillFleet();
  backupId = fleet.backup.id;
  sim = await startSimulator({ port: 0, transitionMs: 50, state: fleet.state });
  redis = await startTestRedis();
  hooks = await startScriptedServer();
  hooks.replyJson(200, { ok: true });
});
afterEach(() => {
  for (const service of services.splice(0)) killGroup(service);
});
afterAll(async () => {
  await hooks?.close();
  await sim?.close();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function policyFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('a policy cannot read nightshift’s own credentials', () => {
  const file = () =>
    policyFile(
      'own.yaml',
      `version: 1
notifications:
  ops: { url: "https://hooks.example.com/\${NIGHTSHIFT_API_KEY}" }
jobs:
  pause-dev:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["dev-*", "\${NIGHTSHIFT_API_KEY}"], workspaces: ["x-\${REDIS_URL}"] }
    notify: [ops]
`,
    );
  const refusal = (name: string) =>
    `environment variable ${name} is one of nightshift's own settings, which a policy may not read; to let policies read it, add it to NIGHTSHIFT_POLICY_ENV_ALLOW where nightshift runs`;

  it('validate refuses ${NIGHTSHIFT_API_KEY} in a webhook URL and a target, and ${REDIS_URL}, at their places: exit 2', async () => {
    const policy = file();
    const cli = startCli(['validate', policy], { NIGHTSHIFT_API_KEY: API_KEY_VALUE, REDIS_URL: redis.url });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(
      [
        `${policy}:3:15: notifications.ops.url: ${refusal('NIGHTSHIFT_API_KEY')}`,
        `${policy}:8:37: jobs.pause-dev.target.workgroups[1]: ${refusal('NIGHTSHIFT_API_KEY')}`,
        `${policy}:8:76: jobs.pause-dev.target.workspaces[0]: ${refusal('REDIS_URL')}`,
        '',
      ].join('\n'),
    );
    expect(cli.output()).not.toContain(API_KEY_VALUE);
  });

  it('reads them once NIGHTSHIFT_POLICY_ENV_ALLOW names them, and shows them as ${NAME}', async () => {
    const policy = file();
    const cli = startCli(['validate', policy], {
      NIGHTSHIFT_API_KEY: API_KEY_VALUE,
      REDIS_URL: redis.url,
      NIGHTSHIFT_POLICY_ENV_ALLOW: 'NIGHTSHIFT_API_KEY, REDIS_URL',
    });
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toContain('inline(dev-*,${NIGHTSHIFT_API_KEY})');
    expect(cli.output()).not.toContain(API_KEY_VALUE);
  });

  it('refuses an allow list that is not variable names, naming the setting: exit 2', async () => {
    const cli = startCli(['validate', file()], { NIGHTSHIFT_POLICY_ENV_ALLOW: 'REDIS_URL,NIGHTSHIFT_*' });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain(
      'NIGHTSHIFT_POLICY_ENV_ALLOW must be variable names separated by commas (e.g. NIGHTSHIFT_BEARER_TOKEN,REDIS_URL), got "NIGHTSHIFT_*"',
    );
  });
});

describe('the console shows the policy’s secrets as ${NAME}, and every other value as it is', () => {
  it('on every page and JSON endpoint, after runs, for a secret in a target and a webhook URL', async () => {
    const policy = policyFile(
      'console.yaml',
      `version: 1
notifications:
  ops: { url: "\${OPS_WEBHOOK}", on: [failure, partial, recovered] }
targets:
  team:
    workgroups: ["\${TEAM}-*", "\${TEAM_TOKEN}"]
jobs:
  pause-team:
    schedule: "0 20 * * *"
    action: pause
    target: team
    notify: [ops]
  drill:
    schedule: "0 6 * * 1"
    action: restore-drill
    description: "restores \${DRILL_BACKUP_ID} into ops/drill"
    notify: [ops]
    with: { workgroup: ops, workspace: drill, backupId: "\${DRILL_BACKUP_ID}" }
`,
    );
    const env = {
      REDIS_URL: redis.url,
      NIGHTSHIFT_REDIS_PREFIX: uniquePrefix('policy-variables'),
      NIGHTSHIFT_API_URL: sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_POLL_INTERVAL_MS: '50',
      NIGHTSHIFT_LOG_FORMAT: 'json',
      NIGHTSHIFT_LOG_LEVEL: 'debug',
      OPS_WEBHOOK: `${hooks.url}${WEBHOOK_PATH}`,
      TEAM: 'dev',
      TEAM_TOKEN,
      DRILL_BACKUP_ID: backupId,
    };
    const service = startService(['start', policy], env);
    services.push(service);
    const listening = await eventually(
      'the ops server',
      () => logLines(service).find((line) => line.msg === 'ops server listening'),
      15_000,
    );
    const address = listening.address as string;

    const runs: RunSummary[] = [];
    for (const job of ['pause-team', 'drill']) {
      const run = startCli(['run', policy, job, '--json'], { ...env, NIGHTSHIFT_LOG_LEVEL: 'warn' });
      expect(await run.exited, run.output()).toBe(0);
      const stdout = run.stdout();
      runs.push(JSON.parse(stdout.slice(stdout.indexOf('{'))) as RunSummary);
    }
    const [paused, drilled] = runs as [RunSummary, RunSummary];
    expect(paused.counts.succeeded).toBeGreaterThan(0);
    expect(drilled.evidence).toMatchObject({ backupId, passed: true });

    const pages: Record<string, string> = {};
    const touched = paused.targets.find((target) => target.outcome === 'succeeded');
    const timeline = `${encodeURIComponent(touched?.workgroupId ?? '')}/${encodeURIComponent(touched?.workspaceId ?? '')}`;
    for (const path of [
      '/',
      '/fleet',
      `/fleet/${timeline}`,
      `/api/fleet/${timeline}`,
      '/runs?job=pause-team',
      '/savings',
      '/findings',
      `/runs/${encodeURIComponent(paused.runId)}`,
      `/runs/${encodeURIComponent(drilled.runId)}`,
      '/api/schedules',
      '/api/runs',
      '/api/fleet',
      '/api/savings',
      '/api/findings',
      `/api/runs/${encodeURIComponent(paused.runId)}`,
      `/api/runs/${encodeURIComponent(drilled.runId)}`,
      '/metrics',
      '/readyz',
      '/healthz',
    ]) {
      const response = await fetch(`${address}${path}`);
      expect(response.status, path).toBe(200);
      pages[path] = await response.text();
    }
    pages['the service’s log'] = service.output();
    pages.notifications = hooks.requests.map((request) => request.body).join('\n');
    for (const [place, text] of Object.entries(pages)) {
      expect(text.includes(TEAM_TOKEN), `${place} shows TEAM_TOKEN`).toBe(false);
      expect(text.includes(WEBHOOK_PATH), `${place} shows the webhook URL`).toBe(false);
    }
    // the target as the policy in force has it: the secret as its reference, the rest resolved
    const schedules = JSON.parse(pages['/api/schedules'] as string) as {
      entries: { name: string; target: string; schedule: string }[];
    };
    expect(schedules.entries.find((entry) => entry.name === 'pause-team')?.target).toBe(
      'team: workgroups dev-*, ${TEAM_TOKEN} / workspaces *',
    );
    expect(pages['/']).toContain('dev-*, ${TEAM_TOKEN}');
    // which backup the drill restored, for whoever reads the run
    expect(pages[`/runs/${encodeURIComponent(drilled.runId)}`]).toContain(backupId);
    expect(pages[`/api/runs/${encodeURIComponent(drilled.runId)}`]).toContain(`"backupId":"${backupId}"`);

    expect((await signalGroup(service, 'SIGTERM', 15_000)).exit).toBe(0);
  }, 90_000);
});
