import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatorHandle, seedState, startSimulator } from '../../src/sim/index.js';
import { workspaceStatusFields } from '../../src/sim/status.js';
import { assertBuilt, type CliProcess, Engine, eventually, startTakeoverWorker } from '../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';

let server: TestRedis;
let sim: SimulatorHandle;
let engine: Engine | undefined;
const workers: CliProcess[] = [];

/** A 4×4 fleet (so `ops/drill` exists) whose drill workspace is Active. */
function drillFleet() {
  const state = seedState({ seed: 11, fleet: { workgroups: 4, workspacesPerWorkgroup: 4 } });
  for (const ws of state.workspaces) Object.assign(ws, workspaceStatusFields('Active'));
  return state;
}

beforeAll(async () => {
  assertBuilt();
  // a restore takes a second: long enough to kill the worker while it waits, short enough that
  // the restore is over before another worker takes the run over
  [server, sim] = await Promise.all([
    startTestRedis(),
    startSimulator({ port: 0, transitionMs: 1_000, state: drillFleet() }),
  ]);
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL')));
  await engine?.close();
  engine = undefined;
});

afterAll(async () => {
  await sim?.close();
  await server?.stop();
});

function startWorker(engine: Engine): CliProcess {
  const worker = startTakeoverWorker(server.url, sim.url, engine.prefix);
  workers.push(worker);
  return worker;
}

const restoreCalls = () => sim.requests().filter((entry) => entry.operation === 'restoreBackup');

describe('a restore drill whose worker is killed after the restore was sent', () => {
  it('is finished by the worker that takes the run over, from the progress record, without a second restore, and its evidence says so', async () => {
    const ops = sim.state.workgroups.find((wg) => wg.name === 'ops');
    const drill = sim.state.workspaces.find(
      (ws) => ws.workgroup_id === ops?.workgroup_id && ws.name === 'drill',
    );
    const backup = sim.state.backups.find((bk) => bk.workspace_id === drill?.workspace_id);
    if (!ops || !drill || !backup) throw new Error('seeded fleet has no ops/drill with a backup');
    const key = `${ops.workgroup_id}/${drill.workspace_id}`;
    const status = () => sim.state.workspaces.find((ws) => ws.workspace_id === drill.workspace_id)?.status;
    engine = new Engine(server.url, 'drill-takeover');
    const runId = await engine.enqueue(
      `version: 1
jobs:
  drill:
    schedule: "0 6 * * 1"
    action: restore-drill
    with: { workgroup: ops, workspace: drill, backupId: ${backup.backup_id} }
`,
      'drill',
    );

    const first = startWorker(engine);
    const progress = async () =>
      JSON.parse((await engine?.redis.hget(engine.keys.runProgress(runId), key)) ?? '{}') as Record<
        string,
        unknown
      >;
    // killed once the progress record says the API accepted the restore, while the drill waits for it
    await eventually('the restore accepted', async () => (await progress()).restoreAccepted === true, 15_000);
    const killedAt = Date.now();
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    expect(status()).toBe('Restoring');
    expect(await engine.history.get(runId)).toBeUndefined();
    expect(restoreCalls()).toHaveLength(1);
    // the restore is over before anyone looks again: a worker that did not know would restore again
    await eventually('the restore over', () => status() === 'Active', 5_000);

    const second = startWorker(engine);
    const run = await engine.waitForRun(runId, 20_000).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n--- second worker:\n${second.output()}`);
    });

    expect(run).toMatchObject({
      outcome: 'succeeded',
      deliveries: 2,
      takenOverFrom: `${hostname()}:${first.child.pid}`,
    });
    expect(restoreCalls()).toHaveLength(1);
    expect(run.evidence).toMatchObject({
      passed: true,
      restoreRequestIds: [restoreCalls()[0]?.requestId],
      afterwards: { outcome: 'paused' },
    });
    // the restore the first worker sent, accepted by it; the second found it over: when exactly it
    // finished nobody saw, so no time to restore is made up from the takeover's delay. Accepted,
    // then recorded, then read here, then the kill: the same millisecond at the closest
    expect(Date.parse(run.evidence?.restoreStartedAt as string)).toBeLessThanOrEqual(killedAt);
    expect(Date.parse(run.evidence?.restoreAcceptedAt as string)).toBeLessThanOrEqual(killedAt);
    expect(run.evidence).toMatchObject({
      executions: 2,
      takenOver: true,
      restoreAcceptedBy: 1,
      restoredBy: 2,
      timeToRestoreMs: null,
      restoreCalls: [{ execution: 1, outcome: 'accepted', requestId: restoreCalls()[0]?.requestId }],
    });
    expect(run.evidence?.timeToRestoreAtMostMs).toBeGreaterThan(0);
    // the first delivery's request ID is the run's too, not only the second's
    expect(run.targets[0]?.requestIds).toContain(restoreCalls()[0]?.requestId);
    expect(await engine.redis.exists(engine.keys.runProgress(runId))).toBe(0);
    expect(await second.stop('SIGTERM')).toBe(0);
  });
});
