// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import type { RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_API_KEY, type SimulatorHandle, seedState, startSimulator } from '../../../src/sim/index.js';
import { workspaceStatusFields } from '../../../src/sim/status.js';
import { createRedis } from '../../../src/store/redis.js';
import { assertBuilt, type CliProcess, eventually, startCli } from '../../helpers/engine.js';
import { dumpRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';

const REFERENCE = '${DRILL_BACKUP_ID}';

/** The JSON a `--json` command printed on stdout (its logs are kept to warnings, on stderr). */
function printed<T>(cli: CliProcess, opening: string): T {
  const output = cli.output();
  return JSON.parse(output.slice(output.indexOf(opening))) as T;
}

describe('values from ${VAR} in a restore drill: the action gets them, everything else shows ${NAME}', () => {
  let sim: SimulatorHandle;
  let server: TestRedis;
  let hooks: ScriptedServer;
  const received = () => hooks.requests.map((request) => request.body).join('\n');
  let worker: CliProcess | undefined;
  const prefix = `env-values-${process.pid}`;

  beforeAll(async () => {
    assertBuilt('src/engine/execute-run.ts', 'src/engine/redact.ts', 'src/cli/commands/plan.ts');
    // a 4×4 fleet has ops/drill, with backups of its own
    const state = seedState({ seed: 11, fleet: { workgroups: 4, workspacesPerWorkgroup: 4 } });
    const drill = state.workspaces.find((ws) => ws.name === 'drill');
    if (!drill) throw new Error('seeded fleet has no ops/drill');
    Object.assign(drill, workspaceStatusFields('Active'));
    sim = await startSimulator({ port: 0, transitionMs: 50, state });
    server = await startTestRedis();
    hooks = await startScriptedServer();
    hooks.replyJson(200, { ok: true });
  });

  afterAll(async () => {
    await worker?.stop('SIGTERM');
    await hooks?.close();
    await sim?.close();
    await server?.stop();
  });

  it('shows the backup id as ${DRILL_BACKUP_ID} in plan, run --json, notifications, logs and Redis', async () => {
    const drill = sim.state.workspaces.find((ws) => ws.name === 'drill');
    const backup = sim.state.backups.find((bk) => bk.workspace_id === drill?.workspace_id);
    if (!backup) throw new Error('seeded fleet has no backup of ops/drill');
    const secret = backup.backup_id;
    const file = join(mkdtempSync(join(tmpdir(), 'nightshift-env-values-')), 'policy.yaml');
    writeFileSync(
      file,
      `version: 1
notifications:
  ops: { url: "\${OPS_WEBHOOK}", on: [failure] }
jobs:
  drill:
    schedule: "0 6 * * 1"
    action: restore-drill
    with: { workgroup: ops, workspace: drill, backupId: "${REFERENCE}", expect: { vertices: ${backup.vertex_count} } }
  drill-check:
    schedule: "0 6 * * 2"
    action: restore-drill
    notify: [ops]
    retry: { attempts: 1 }
    with: { workgroup: ops, workspace: drill, backupId: "${REFERENCE}", expect: { vertices: ${(backup.vertex_count ?? 0) + 1} } }
`,
    );
    const env = {
      REDIS_URL: server.url,
      NIGHTSHIFT_REDIS_PREFIX: prefix,
      NIGHTSHIFT_API_URL: sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_POLL_INTERVAL_MS: '50',
      NIGHTSHIFT_LOG_LEVEL: 'warn',
      NIGHTSHIFT_LOG_FORMAT: 'json',
      DRILL_BACKUP_ID: secret,
      OPS_WEBHOOK: `${hooks.url}/hook`,
    };

    const plan = startCli(['plan', file, '--job', 'drill', '--json'], env);
    expect(await plan.exited).toBe(0);
    const [planned] = printed<RunSummary[]>(plan, '[');
    expect(planned?.targets[0]?.reason).toBe(
      `would restore ${REFERENCE}, check vertices ${backup.vertex_count}, then pause it`,
    );
    expect(planned?.targets[0]?.detail).toMatchObject({ backupId: REFERENCE });

    const inline = startCli(['run', file, 'drill', '--inline', '--json'], env);
    expect(await inline.exited).toBe(0);
    const ran = printed<RunSummary>(inline, '{');
    // the restore used the real id: the workspace came back with that backup's counts
    expect(ran.outcome).toBe('succeeded');
    expect(ran.evidence).toMatchObject({ backupId: REFERENCE, passed: true });
    expect(ran.targets[0]?.reason).toMatch(/^restored \$\{DRILL_BACKUP_ID\} in [\d.]+s; paused afterwards$/);
    expect(ran.targets[0]?.detail).toMatchObject({ backupId: REFERENCE, vertices: backup.vertex_count });

    worker = startCli(['worker'], { ...env, NIGHTSHIFT_LOG_LEVEL: 'debug' });
    const queued = startCli(['run', file, 'drill-check', '--json'], env);
    expect(await queued.exited).toBe(1);
    const failed = printed<RunSummary>(queued, '{');
    expect(failed.findings.map((finding) => finding.message)).toEqual([
      expect.stringContaining(`from ${REFERENCE} shows vertices`),
    ]);
    expect(failed.targets[0]?.error?.message).toContain(`from ${REFERENCE} shows vertices`);
    await eventually('the failure notification', () => received().includes('drill-check'), 15_000);

    const redis = createRedis({ url: server.url, role: 'test' });
    try {
      const places = {
        plan: plan.output(),
        'run --inline --json': inline.output(),
        'run --json (queued)': queued.output(),
        'worker log': worker.output(),
        redis: await dumpRedis(redis, prefix),
        webhook: received(),
      };
      // the worker logged the target's error and the run's history sits in Redis, both as written
      expect(places['worker log']).toContain(`from ${REFERENCE} shows vertices`);
      expect(places.redis).toContain(`from ${REFERENCE} shows vertices`);
      for (const [place, text] of Object.entries(places)) {
        expect(text.includes(secret), `${place} shows the value of DRILL_BACKUP_ID`).toBe(false);
      }
    } finally {
      redis.disconnect();
    }
  }, 90_000);
});
