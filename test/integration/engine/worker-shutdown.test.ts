import { describe, expect, it } from 'vitest';
import { eventually, useEngineHarness, workspacesNot } from '../../helpers/engine.js';

// 200 ms per pause, one at a time: the run takes about 1.2 s
const harness = useEngineHarness(
  { workgroups: 1, workspacesPerWorkgroup: 6 },
  { faults: { latencyMs: 200, operations: ['pauseWorkspace'] } },
);

const POLICY = `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 1
`;

describe('a worker shut down past its grace period', () => {
  it('hands its unfinished run back to the queue, and another worker finishes it from its checkpoints', async () => {
    const engine = harness.engine('worker-shutdown');
    const current = engine;
    const first = engine.worker(harness.sim.url);
    const runId = await engine.enqueue(POLICY, 'fleet-pause');
    await eventually(
      'the run under way',
      async () => (await current.redis.hlen(current.keys.runTargets(runId))) >= 2,
    );
    await first.close(100);
    expect(await engine.history.get(runId)).toBeUndefined();
    expect(await (await engine.queue.getJob(runId))?.getState()).toBe('waiting');
    // the run keeps the job's lock, so no other run of the job slips in before it resumes
    expect(await engine.redis.get(engine.keys.runLock('fleet-pause'))).toBe(runId);

    engine.worker(harness.sim.url);
    const run = await engine.waitForRun(runId);
    expect(run).toMatchObject({ outcome: 'succeeded', deliveries: 2, counts: { total: 6, failed: 0 } });
    await eventually('every workspace Stopped', () => workspacesNot(harness.sim, 'Stopped').length === 0);
    expect(await engine.history.count({ job: 'fleet-pause' })).toBe(1);
    expect(await engine.redis.exists(engine.keys.runLock('fleet-pause'))).toBe(0);
  });
});
