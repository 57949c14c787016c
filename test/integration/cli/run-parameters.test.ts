// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { enqueueRuns, manualRunId } from '../../../src/queue/index.js';
import type { SimulatorHandle } from '../../../src/sim/index.js';
import { AuditTrail } from '../../../src/store/index.js';
import { drillAndBackup } from '../../helpers/console-forms.js';
import { assertBuilt, type Engine, eventually, startCli, useEngineHarness } from '../../helpers/engine.js';
import { DRILL_BY_PARAMETER } from '../../helpers/policies.js';

const POLICY = DRILL_BY_PARAMETER;

function policyFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'nightshift-run-parameters-')), 'policy.yaml');
  writeFileSync(file, POLICY);
  return file;
}

/** The simulator's restores of `workspaceId` it accepted, from request `since` on. */
function restoresOf(sim: SimulatorHandle, workspaceId: string, since = 0): number {
  return sim
    .requests()
    .filter(
      (entry) =>
        entry.seq > since &&
        entry.operation === 'restoreBackup' &&
        entry.path.includes(`/${workspaceId}/`) &&
        entry.status === 200,
    ).length;
}

describe('nightshift run --with (child process, Redis, a worker, simulator)', () => {
  const harness = useEngineHarness({ workgroups: 4, workspacesPerWorkgroup: 4 }, {}, { built: true });

  const env = (engine: Engine) => ({
    REDIS_URL: harness.server.url,
    NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
    NIGHTSHIFT_LOG_LEVEL: 'warn',
    NIGHTSHIFT_LOG_FORMAT: '',
  });

  it('runs the drill with the backup given, records the parameter in the summary and who asked in the audit trail', async () => {
    assertBuilt();
    const engine = harness.engine('run-parameters');
    engine.worker(harness.sim.url);
    const { drill, backup } = drillAndBackup(harness.sim);
    const since = harness.sim.requests().at(-1)?.seq ?? 0;
    const cli = startCli(
      [
        'run',
        policyFile(),
        'drill',
        '--with',
        `backupId=${backup.backup_id}`,
        '--json',
        '--quiet',
        '--by',
        'alice',
        '--reason',
        'drill before the upgrade',
      ],
      env(engine),
    );
    expect(await cli.exited, cli.output()).toBe(0);
    const summary = JSON.parse(cli.stdout()) as RunSummary;
    expect(summary).toMatchObject({ outcome: 'succeeded', parameters: { backupId: backup.backup_id } });
    expect(restoresOf(harness.sim, drill.workspace_id, since)).toBe(1);
    const restored = harness.sim.state.workspaces.find((ws) => ws.workspace_id === drill.workspace_id);
    expect(restored?.vertex_count).toBe(backup.vertex_count);
    expect((await engine.history.get(summary.runId))?.parameters).toEqual({ backupId: backup.backup_id });

    const [entry] = await new AuditTrail(engine.redis, { prefix: engine.prefix }).list();
    expect(entry).toMatchObject({
      who: 'alice',
      action: 'run',
      subject: summary.runId,
      where: expect.stringMatching(/^cli \S+@\S+$/),
      why: 'drill before the upgrade',
      details: { job: 'drill', 'with.backupId': backup.backup_id },
    });
  });

  it('refuses a value the action refuses, or a key it does not take, with exit 2 at the job in the file, queueing nothing', async () => {
    assertBuilt();
    const engine = harness.engine('run-parameters-bad');
    const file = policyFile();
    const bad = startCli(
      ['run', file, 'drill', '--with', 'backupId=bk-1', '--with', 'waitReady=soon'],
      env(engine),
    );
    expect(await bad.exited, bad.output()).toBe(2);
    expect(bad.stderr()).toContain(`${file}:3:3: --with waitReady=soon: `);

    const misspelt = startCli(['run', file, 'drill', '--with', 'backupid=bk-1', '--json'], env(engine));
    expect(await misspelt.exited, misspelt.output()).toBe(2);
    // the job still reads its backup from the variable, unset here: that is the second problem
    expect(JSON.parse(misspelt.stdout())).toMatchObject({
      error: 'invalid-policy',
      problems: [
        {
          file,
          line: 3,
          col: 3,
          message: expect.stringMatching(/^--with backupid=bk-1: .*did you mean "backupId"\?/),
        },
        { line: 10, message: expect.stringContaining('DRILL_BACKUP_ID is not set') },
      ],
    });

    const malformed = startCli(['run', file, 'drill', '--with', 'backupId'], env(engine));
    expect(await malformed.exited, malformed.output()).toBe(2);
    expect(malformed.stderr()).toContain('--with backupId: expected key=value');

    expect(await engine.queue.count()).toBe(0);
  });

  /** Queues a drill with `parameters` as the job data in Redis carries them, signed or not. */
  async function queueDrill(
    engine: Engine,
    parameters: Record<string, string>,
    { signed }: { signed: boolean },
  ) {
    const policySha = await engine.policies.put(POLICY);
    const runId = manualRunId('drill');
    const parameterSignatures = signed
      ? engine.policies.signParameters({ runId, job: 'drill', policySha, parameters })
      : undefined;
    await enqueueRuns(engine.queue, [
      { runId, job: 'drill', policySha, trigger: 'manual', dryRun: false, parameters, parameterSignatures },
    ]);
    return eventually('the refused run recorded', () => engine.history.get(runId), 15_000);
  }

  it('is checked again by the worker: signed parameters the schema refuses fail the run, restoring nothing', async () => {
    const engine = harness.engine('run-parameters-schema');
    engine.worker(harness.sim.url);
    const { drill, backup } = drillAndBackup(harness.sim);
    const since = harness.sim.requests().at(-1)?.seq ?? 0;
    const summary = await queueDrill(
      engine,
      { backupId: backup.backup_id, workspace: '*' },
      { signed: true },
    );
    expect(summary).toMatchObject({ outcome: 'failed', parameters: { workspace: '*' } });
    expect(summary.reason).toMatch(/--with workspace=\*: name one workspace exactly/);
    expect(restoresOf(harness.sim, drill.workspace_id, since)).toBe(0);
  });

  it('is refused by the worker when written into Redis without a signature of its key, restoring nothing', async () => {
    const engine = harness.engine('run-parameters-unsigned');
    engine.worker(harness.sim.url);
    const { drill, backup } = drillAndBackup(harness.sim);
    const since = harness.sim.requests().at(-1)?.seq ?? 0;
    const summary = await queueDrill(engine, { backupId: backup.backup_id }, { signed: false });
    expect(summary).toMatchObject({ outcome: 'failed' });
    expect(summary.reason).toContain('parameters of run drill@manual-');
    expect(summary.reason).toContain('refused (unsigned)');
    expect(restoresOf(harness.sim, drill.workspace_id, since)).toBe(0);
  });
});
