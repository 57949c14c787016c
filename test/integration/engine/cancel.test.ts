import { describe, expect, it, onTestFinished } from 'vitest';
import { RunCancellations } from '../../../src/store/index.js';
import { assertBuilt, eventually, pauseRequests, startCli, useEngineHarness } from '../../helpers/engine.js';
import { ONE_AT_A_TIME_PAUSE } from '../../helpers/policies.js';

// each pause takes 500 ms and the job pauses one at a time: a run of 12 takes about 6 s, time enough
// for a CLI process to start and cancel it on a loaded machine
const harness = useEngineHarness(
  { workgroups: 3, workspacesPerWorkgroup: 4 },
  { faults: { latencyMs: 500, operations: ['pauseWorkspace'] } },
  { built: true },
);

const POLICY = ONE_AT_A_TIME_PAUSE;

function cli(args: string[], prefix: string) {
  return startCli(args, { REDIS_URL: harness.server.url, NIGHTSHIFT_REDIS_PREFIX: prefix });
}

describe('nightshift cancel', () => {
  it('stops a running run from starting targets: those under way finish, it ends cancelled with who and why, and the sim saw no pause after', async () => {
    assertBuilt();
    harness.sim.reset();
    const engine = harness.engine('cancel-running');
    // renewals every 500 ms: the worker hears of the cancel within half a second
    engine.worker(harness.sim.url, { lockDurationMs: 1_500 });
    const runId = await engine.enqueue(POLICY, 'slow-pause');
    await eventually('a pause accepted', () => pauseRequests(harness.sim).size >= 2, 10_000);

    const cancel = cli(['cancel', runId, '--reason', 'wrong fleet', '--by', 'ana', '--json'], engine.prefix);
    expect(await cancel.exited).toBe(0);
    expect(JSON.parse(cancel.stdout())).toMatchObject({
      runId,
      state: 'cancelling',
      requested: true,
      cancellation: { by: 'ana', reason: 'wrong fleet' },
    });

    const run = await engine.waitForRun(runId, 15_000);
    expect(run).toMatchObject({
      outcome: 'cancelled',
      reason: 'cancelled by ana: wrong fleet',
      cancellation: { by: 'ana', reason: 'wrong fleet' },
    });
    expect(run.counts.total).toBeLessThan(12);
    // every pause the simulator took is one the summary records, and none came after the run ended
    const paused = [...pauseRequests(harness.sim).keys()].sort();
    expect(
      run.targets
        .filter((target) => target.outcome === 'succeeded')
        .map((t) => t.workspaceId)
        .sort(),
    ).toEqual(paused);
    const calls = [...pauseRequests(harness.sim).values()].flat();
    expect(Math.max(...calls.map((call) => call.at))).toBeLessThanOrEqual(
      Date.parse(run.finishedAt as string),
    );

    const again = cli(['cancel', runId], engine.prefix);
    expect(await again.exited).toBe(0);
    expect(again.stdout()).toContain(`${runId} was cancelled by ana: wrong fleet`);
  });

  it('stops a split run: queued parts are taken off the queue, running ones stop starting targets, the run ends cancelled', async () => {
    harness.sim.reset();
    // slower pauses: four lanes at once would finish 12 at 500 ms within a few seconds
    harness.sim.setFaults({ latencyMs: 1_200, operations: ['pauseWorkspace'] });
    onTestFinished(() => void harness.sim.setFaults({ latencyMs: 500, operations: ['pauseWorkspace'] }));
    const engine = harness.engine('cancel-split');
    // four parts of three, one pause at a time per worker
    for (const name of ['a', 'b'])
      engine.worker(harness.sim.url, { partSize: 3, lockDurationMs: 1_500, log: engine.log.child({ name }) });
    const runId = await engine.enqueue(POLICY, 'slow-pause');
    await eventually('a pause accepted', () => pauseRequests(harness.sim).size >= 1, 10_000);
    // asked for as the command does (its process is the first test's), without a process's start-up
    await new RunCancellations(engine.redis, { prefix: engine.prefix }).request(runId, { by: 'ana' });

    const run = await engine.waitForRun(runId, 15_000);
    expect(run).toMatchObject({ outcome: 'cancelled', cancellation: { by: 'ana' } });
    expect(run.counts.total).toBeLessThan(12);
    expect(run.counts.failed).toBe(0);
    const paused = [...pauseRequests(harness.sim).keys()].sort();
    expect(run.targets.map((target) => target.workspaceId).sort()).toEqual(paused);
    // no part left to be taken later
    const parts = await engine.queue.getJobs(['waiting', 'delayed', 'prioritized', 'active']);
    expect(parts.map((part) => part.id)).toEqual([]);
  });

  it('cancels a queued run before it starts: the worker that takes it records it cancelled, touching nothing', async () => {
    harness.sim.reset();
    const engine = harness.engine('cancel-queued');
    const runId = await engine.enqueue(POLICY, 'slow-pause');
    const cancel = cli(['cancel', runId, '--by', 'bo'], engine.prefix);
    expect(await cancel.exited).toBe(0);
    expect(cancel.stdout()).toContain(`cancelling ${runId} (cancelled by bo)`);
    engine.worker(harness.sim.url);
    const run = await engine.waitForRun(runId);
    expect(run).toMatchObject({ outcome: 'cancelled', counts: { total: 0 } });
    expect(pauseRequests(harness.sim).size).toBe(0);
  });

  it('exits 1 for a run that already finished, and 2 for a run id nobody knows, saying so', async () => {
    harness.sim.reset();
    const engine = harness.engine('cancel-finished');
    engine.worker(harness.sim.url);
    const runId = await engine.enqueue(POLICY.replace('concurrency: 1', 'concurrency: 12'), 'slow-pause');
    expect((await engine.waitForRun(runId)).outcome).toBe('succeeded');
    const late = cli(['cancel', runId], engine.prefix);
    expect(await late.exited).toBe(1);
    expect(late.stdout()).toContain(`${runId} already finished (succeeded): nothing to cancel`);
    // a finished run is not marked cancelled after the fact
    expect(await new RunCancellations(engine.redis, { prefix: engine.prefix }).get(runId)).toBeUndefined();

    const unknown = cli(['cancel', 'no-such-run@1'], engine.prefix);
    expect(await unknown.exited).toBe(2);
    expect(unknown.output()).toContain('no run "no-such-run@1" in the queue or the history');
  });

  it("says that cancelling a window's reconciliation leaves the window in force", async () => {
    const engine = harness.engine('cancel-window');
    const text = `version: 1
windows:
  office:
    target: { workgroups: ["*"] }
    uptime: "Mon-Fri 07:30-19:30"
    timezone: Europe/Berlin
    every: 15m
`;
    await engine.policies.setCurrent(await engine.policies.put(text), { host: 'test' });
    const runId = await engine.enqueue(text, 'office');
    const cancel = cli(['cancel', runId, '--json'], engine.prefix);
    expect(await cancel.exited).toBe(0);
    expect(JSON.parse(cancel.stdout())).toMatchObject({
      state: 'cancelling',
      note: 'note: "office" is a window: it stays in force, and its next reconciliation acts again unless you `nightshift suspend office`',
    });
  });
});
