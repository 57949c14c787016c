import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/index.js';
import { DEFAULT_API_KEY, type SimulatorHandle } from '../../../src/sim/index.js';
import { Engine, eventually, pauseRequests, startFleetSim, workspacesNot } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';

let server: TestRedis | undefined;
let sim: SimulatorHandle | undefined;
let engine: Engine | undefined;

afterEach(async () => {
  await engine?.close();
  await sim?.close();
  await server?.stop();
  engine = undefined;
  sim = undefined;
  server = undefined;
});

const policy = (concurrency: number) => `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: ${concurrency}
    retry: { attempts: 8, backoff: 1s, strategy: fixed }
`;

describe('API faults during a run', () => {
  it('retries transient errors and throttling (honouring Retry-After) until every workspace is paused', async () => {
    [server, sim] = await Promise.all([
      startTestRedis(),
      startFleetSim(
        { workgroups: 2, workspacesPerWorkgroup: 4 },
        // the pause calls fail 30 % of the time, and more than 4 a second are throttled
        { faults: { errorRate: 0.3, throttleRps: 4, seed: 11, operations: ['pauseWorkspace'] } },
      ),
    ]);
    engine = new Engine(server.url, 'api-faults');
    engine.worker(sim.url);
    const text = policy(4);
    const run = await engine.waitForRun(await engine.enqueue(text, 'fleet-pause'), 30_000);

    expect(run).toMatchObject({ outcome: 'succeeded', counts: { total: 8, succeeded: 8, failed: 0 } });
    const current = sim;
    await eventually('every workspace Stopped', () => workspacesNot(current, 'Stopped').length === 0);

    const faults = sim.requests().filter((entry) => entry.operation === 'pauseWorkspace');
    expect(faults.some((entry) => entry.fault === 'error')).toBe(true);
    expect(faults.some((entry) => entry.fault === 'throttle')).toBe(true);
    const retries = run.targets.reduce((sum, target) => sum + target.attempts - 1, 0);
    expect(retries).toBeGreaterThan(0);
    // one retry owner: every attempt and every throttled try is exactly one pause call, only the
    // last one succeeded, and the attempts counted the 500s only
    const calls = pauseRequests(sim);
    for (const target of run.targets) {
      const made = calls.get(target.workspaceId as string) ?? [];
      const statuses = made.map((call) => call.status);
      expect(statuses).toHaveLength(target.attempts + (target.throttled ?? 0));
      expect(statuses.at(-1)).toBe(200);
      expect(statuses.filter((status) => status === 500)).toHaveLength(target.attempts - 1);
      expect(statuses.filter((status) => status === 429)).toHaveLength(target.throttled ?? 0);
      // after a 429 (Retry-After: 1) the next try waited at least that long
      for (const [index, call] of made.entries()) {
        const next = made[index + 1];
        if (call.status === 429 && next) expect(next.at - call.at).toBeGreaterThanOrEqual(990);
      }
    }
  });

  it('does not retry a permanent error: that target fails after one attempt, the others succeed, the run is partial', async () => {
    [server, sim] = await Promise.all([
      startTestRedis(),
      // each pause waits 300 ms before the simulator looks at the workspace
      startFleetSim(
        { workgroups: 1, workspacesPerWorkgroup: 4 },
        { transitionMs: 5_000, faults: { latencyMs: 300, operations: ['pauseWorkspace'] } },
      ),
    ]);
    engine = new Engine(server.url, 'permanent-error');
    engine.worker(sim.url);
    const current = sim;
    const [victim] = current.state.workspaces;
    const backup = current.state.backups.find((candidate) => candidate.workspace_id === victim?.workspace_id);
    if (!victim || !backup) throw new Error('the seeded fleet has no workspace with a backup');
    const runId = await engine.enqueue(policy(1), 'fleet-pause');

    // once the run has listed the fleet (all Active), someone starts a restore of one workspace:
    // the pause of it is then refused with 400 Bad-Request, which no retry can change
    await eventually(
      'the run listed the fleet',
      () => current.requests().some((entry) => entry.operation === 'listWorkgroups'),
      10_000,
      5,
    );
    const api = new ApiClient({ baseUrl: current.url, apiKey: DEFAULT_API_KEY });
    try {
      await api.restoreBackup(victim.workgroup_id, victim.workspace_id, backup.backup_id);
    } finally {
      await api.close();
    }
    const run = await engine.waitForRun(runId);

    expect(run).toMatchObject({ outcome: 'partial', counts: { total: 4, succeeded: 3, failed: 1 } });
    const failed = run.targets.find((target) => target.outcome === 'failed');
    expect(failed).toMatchObject({
      workspaceId: victim.workspace_id,
      attempts: 1,
      error: { type: 'Bad-Request', status: 400, retryable: false },
    });
    expect(
      pauseRequests(current)
        .get(victim.workspace_id)
        ?.map((call) => call.status),
    ).toEqual([400]);
    expect(engine.lines('target attempt failed; retrying')).toEqual([]);
    for (const target of run.targets.filter((candidate) => candidate !== failed)) {
      expect(target).toMatchObject({ outcome: 'succeeded', attempts: 1 });
    }
    // a partial run completes in BullMQ; only a run where everything failed is a failed job
    const queue = engine.queue;
    await eventually(
      'the BullMQ job completed',
      async () => (await (await queue.getJob(runId))?.getState()) === 'completed',
    );
  });
});
