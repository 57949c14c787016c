// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import type { RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_API_KEY, type SimulatorHandle, startSimulator } from '../../../src/sim/index.js';
import { createRedis } from '../../../src/store/redis.js';
import { activeDrillFleet } from '../../helpers/drill-fleet.js';
import { assertBuilt, type CliProcess, eventually, startCli } from '../../helpers/engine.js';
import { dumpRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';

const REFERENCE = '${DRILL_BACKUP_ID}';
const MISSING = 'bk-never-made-4d2a';

/** The JSON a `--json` command printed on stdout (its logs go to stderr). */
function printed<T>(cli: CliProcess, opening: string): T {
  const output = cli.stdout();
  return JSON.parse(output.slice(output.indexOf(opening))) as T;
}

describe('values from ${VAR} in a restore drill: a secret is shown as ${NAME} everywhere, any other value as it is', () => {
  let sim: SimulatorHandle;
  let server: TestRedis;
  let hooks: ScriptedServer;
  const received = () => hooks.requests.map((request) => request.body).join('\n');
  let worker: CliProcess | undefined;
  let dir: string;
  let backup: { id: string; vertices: number };

  beforeAll(async () => {
    assertBuilt();
    const fleet = activeDrillFleet();
    backup = fleet.backup;
    sim = await startSimulator({ port: 0, transitionMs: 50, state: fleet.state });
    server = await startTestRedis();
    hooks = await startScriptedServer();
    hooks.replyJson(200, { ok: true });
    dir = mkdtempSync(join(tmpdir(), 'nightshift-env-values-'));
  });

  afterAll(async () => {
    await worker?.stop('SIGTERM');
    await hooks?.close();
    await sim?.close();
    await server?.stop();
  });

  const env = (prefix: string) => ({
    REDIS_URL: server.url,
    NIGHTSHIFT_REDIS_PREFIX: prefix,
    NIGHTSHIFT_API_URL: sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_POLL_INTERVAL_MS: '50',
    NIGHTSHIFT_LOG_LEVEL: 'warn',
    NIGHTSHIFT_LOG_FORMAT: 'json',
    DRILL_BACKUP_ID: backup.id,
    MISSING_BACKUP_ID: MISSING,
    OPS_WEBHOOK: `${hooks.url}/hook`,
  });

  it('shows a backup id from ${DRILL_BACKUP_ID} in the plan, the evidence, the reasons and the API’s error, where on-call looks', async () => {
    const file = join(dir, 'plain.yaml');
    writeFileSync(
      file,
      `version: 1
jobs:
  drill:
    schedule: "0 6 * * 1"
    action: restore-drill
    with: { workgroup: ops, workspace: drill, backupId: "${REFERENCE}", expect: { vertices: ${backup.vertices} } }
  drill-missing:
    schedule: "0 6 * * 2"
    action: restore-drill
    retry: { attempts: 1 }
    with: { workgroup: ops, workspace: drill, backupId: "\${MISSING_BACKUP_ID}" }
`,
    );
    const plan = startCli(['plan', file, '--job', 'drill', '--json'], env(`env-values-plain-${process.pid}`));
    expect(await plan.exited).toBe(0);
    const [planned] = printed<RunSummary[]>(plan, '[');
    expect(planned?.targets[0]?.reason).toBe(
      `would restore ${backup.id}, check vertices ${backup.vertices}, then pause it`,
    );
    expect(planned?.targets[0]?.detail).toMatchObject({ backupId: backup.id });

    const inline = startCli(
      ['run', file, 'drill', '--inline', '--json'],
      env(`env-values-plain-${process.pid}`),
    );
    expect(await inline.exited).toBe(0);
    const ran = printed<RunSummary>(inline, '{');
    expect(ran.outcome).toBe('succeeded');
    expect(ran.evidence).toMatchObject({ backupId: backup.id, passed: true });
    expect(ran.targets[0]?.reason).toMatch(
      new RegExp(`^restored ${backup.id} in [\\d.]+s; paused afterwards$`),
    );

    // which backup was not restored: the API's own words, with the id it refused
    const missing = startCli(
      ['run', file, 'drill-missing', '--inline', '--json'],
      env(`env-values-plain-${process.pid}`),
    );
    expect(await missing.exited).toBe(1);
    const refused = printed<RunSummary>(missing, '{');
    expect(refused.evidence).toMatchObject({ backupId: MISSING, passed: false });
    expect(JSON.stringify(refused.targets[0]?.error)).toContain(MISSING);
    expect(JSON.stringify(refused)).not.toContain('MISSING_BACKUP_ID');
  }, 60_000);

  it('shows a backup id listed under secrets: as ${DRILL_BACKUP_ID} in run --json, notifications, logs and Redis', async () => {
    const prefix = `env-values-secret-${process.pid}`;
    const file = join(dir, 'secret.yaml');
    writeFileSync(
      file,
      `version: 1
secrets: [DRILL_BACKUP_ID]
notifications:
  ops: { url: "\${OPS_WEBHOOK}", on: [failure] }
jobs:
  drill-check:
    schedule: "0 6 * * 2"
    action: restore-drill
    notify: [ops]
    retry: { attempts: 1 }
    with: { workgroup: ops, workspace: drill, backupId: "${REFERENCE}", expect: { vertices: ${backup.vertices + 1} } }
`,
    );
    worker = startCli(['worker'], { ...env(prefix), NIGHTSHIFT_LOG_LEVEL: 'debug' });
    const queued = startCli(['run', file, 'drill-check', '--json'], env(prefix));
    expect(await queued.exited).toBe(1);
    const failed = printed<RunSummary>(queued, '{');
    expect(failed.findings.map((finding) => finding.message)).toEqual([
      expect.stringContaining(`from ${REFERENCE} shows vertices`),
    ]);
    expect(failed.evidence).toMatchObject({ backupId: REFERENCE, passed: false });
    await eventually('the failure notification', () => received().includes('drill-check'), 15_000);

    const redis = createRedis({ url: server.url, role: 'test' });
    try {
      const places = {
        'run --json (queued)': queued.output(),
        'worker log': worker.output(),
        redis: await dumpRedis(redis, prefix),
        webhook: received(),
      };
      // the worker logged the target's error and the run's history sits in Redis, both as ${NAME}
      expect(places['worker log']).toContain(`from ${REFERENCE} shows vertices`);
      expect(places.redis).toContain(`from ${REFERENCE} shows vertices`);
      for (const [place, text] of Object.entries(places)) {
        expect(text.includes(backup.id), `${place} shows the value of DRILL_BACKUP_ID`).toBe(false);
      }
    } finally {
      redis.disconnect();
    }
  }, 90_000);
});
