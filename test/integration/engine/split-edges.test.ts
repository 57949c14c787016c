import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import { InMemoryNotificationMemory, Notifier, type RunPayload } from '../../../src/notify/index.js';
import { workspaceStatusFields } from '../../../src/sim/status.js';
import type { Clock } from '../../../src/time/index.js';
import { clockAt, FRIDAY_EVENING, MONDAY_MORNING } from '../../helpers/clock.js';
import { type Engine, eventually, pauseRequests, useEngineHarness } from '../../helpers/engine.js';

const TARGETS = 60;
const PART_SIZE = 20;

// 100 ms per pause and resume, four at a time: a part of 20 takes about half a second or more
const harness = useEngineHarness(
  { workgroups: 6, workspacesPerWorkgroup: 10 },
  { faults: { latencyMs: 100, operations: ['pauseWorkspace', 'resumeWorkspace'] } },
);

/** Where the window's sink posts: what a split edge tells its sinks is read back from it. */
let receiver: ScriptedServer;
let notifier: Notifier;

beforeAll(async () => {
  receiver = await startScriptedServer();
  receiver.replyJson(200, { ok: true });
  notifier = new Notifier({ memory: new InMemoryNotificationMemory() });
});

afterAll(async () => {
  await notifier.close();
  await receiver.close();
});

const window = () => `version: 1
notifications:
  ops: { url: "${receiver.url}/ops", on: [acted] }
windows:
  office:
    target: { workgroups: ["*"] }
    uptime: "Mon-Fri 07:30-19:30"
    timezone: Europe/Berlin
    concurrency: 4
    notify: [ops]
`;

/** The `acted` messages the sink got, by run. */
const acted = () => receiver.requests.map((request) => JSON.parse(request.body) as RunPayload);

const JOBS = `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 4
  fleet-resume:
    schedule: "30 7 * * *"
    action: resume
    target: { workgroups: ["*"] }
    concurrency: 4
    with: { waitReady: none, onlyPausedBy: fleet-pause }
`;

/** Two workers splitting runs into parts of 20, one run or part at a time each, telling one notifier. */
function twoWorkers(engine: Engine, clock?: Clock) {
  return ['a', 'b'].map((name) =>
    engine.worker(harness.sim.url, {
      partSize: PART_SIZE,
      concurrency: 1,
      log: engine.log.child({ name }),
      notifier,
      ...(clock ? { clock } : {}),
    }),
  );
}

/** Which workers started the run's parts. */
const partWorkers = (engine: Engine, runId: string) =>
  new Set(
    engine
      .lines('run started')
      .filter((line) => line.runId === runId && line.part !== undefined)
      .map((line) => line.name),
  );

const statuses = () => harness.sim.state.workspaces.map((ws) => ws.status);

describe('window edges and resumes shared out in parts', () => {
  it('an off edge over more workspaces than the part size is worked by both workers: each paused once and owned, the edge settled, every pause in the summary, one acted message for the whole edge; the uptime start hands back in parts too, and says so once', async () => {
    harness.sim.reset();
    const engine = harness.engine('split-edge');
    const evening = twoWorkers(engine, clockAt(FRIDAY_EVENING));
    const runId = await engine.enqueue(window(), 'office');
    const run = await engine.waitForRun(runId, 30_000);
    expect(run).toMatchObject({ outcome: 'succeeded', counts: { total: TARGETS, succeeded: TARGETS } });
    expect(run.evidence?.window).toMatchObject({ up: false, workspaces: TARGETS, acted: TARGETS, drift: 0 });
    expect(engine.lines('run split into parts')).toMatchObject([{ runId, parts: TARGETS / PART_SIZE }]);
    expect(partWorkers(engine, runId)).toEqual(new Set(['a', 'b']));
    const calls = pauseRequests(harness.sim);
    expect(calls.size).toBe(TARGETS);
    for (const made of calls.values()) expect(made.filter((call) => call.status === 200)).toHaveLength(1);
    const owned = await engine.state.ledger.all();
    expect([...owned.values()].filter((r) => r.owner === 'office' && r.runId === runId)).toHaveLength(
      TARGETS,
    );
    expect(await engine.state.windows.get('office')).toMatchObject({
      pending: [],
      drift: 0,
      workspaces: TARGETS,
    });
    await eventually(
      'every workspace Stopped',
      () => statuses().every((status) => status === 'Stopped'),
      20_000,
    );

    // the worker notifies after it records the run: closing it lets its send end first
    await Promise.all(evening.map((worker) => worker.close(5_000)));
    expect(acted()).toEqual([
      expect.objectContaining({
        runId,
        events: ['acted'],
        acted: expect.objectContaining({ paused: TARGETS }),
      }),
    ]);
    twoWorkers(engine, clockAt(MONDAY_MORNING));
    const startId = await engine.enqueue(window(), 'office');
    const start = await engine.waitForRun(startId, 30_000);
    expect(start).toMatchObject({ outcome: 'succeeded', counts: { total: TARGETS, succeeded: TARGETS } });
    expect(start.evidence?.window).toMatchObject({ up: true, acted: TARGETS, drift: 0 });
    expect(engine.lines('run split into parts').map((line) => line.runId)).toContain(startId);
    expect(partWorkers(engine, startId)).toEqual(new Set(['a', 'b']));
    const resumes = harness.sim
      .requests()
      .filter((call) => call.operation === 'resumeWorkspace' && call.status === 200);
    expect(new Set(resumes.map((call) => call.path)).size).toBe(TARGETS);
    expect(resumes).toHaveLength(TARGETS);
    expect((await engine.state.ledger.all()).size).toBe(0);
    await eventually('the uptime start told', () => acted().length === 2);
    expect(acted()[1]).toMatchObject({
      runId: startId,
      events: ['acted'],
      acted: { paused: 0, resumed: TARGETS, failed: 0 },
    });
  }, 90_000);

  it('a resume job with onlyPausedBy splits too, and its run still says what its pause job owns after every part', async () => {
    harness.sim.reset();
    const engine = harness.engine('split-resume');
    twoWorkers(engine, clockAt(MONDAY_MORNING));
    const pause = await engine.waitForRun(await engine.enqueue(JOBS, 'fleet-pause'), 30_000);
    expect(pause.counts).toMatchObject({ succeeded: TARGETS });
    await eventually(
      'every workspace Stopped',
      () => statuses().every((status) => status === 'Stopped'),
      20_000,
    );
    // one workspace the pause job paused is held Stopping by the platform: not resumable yet
    const [slow] = harness.sim.state.workspaces;
    if (!slow) throw new Error('no workspace');
    Object.assign(slow, workspaceStatusFields('Stopping'));
    const resumeId = await engine.enqueue(JOBS, 'fleet-resume');
    const resume = await engine.waitForRun(resumeId, 30_000);
    expect(engine.lines('run split into parts').map((line) => line.runId)).toContain(resumeId);
    expect(resume.counts).toMatchObject({ total: TARGETS, succeeded: TARGETS - 1, skipped: 1 });
    expect(resume).toMatchObject({
      outcome: 'partial',
      evidence: { onlyPausedBy: { job: 'fleet-pause', owned: TARGETS } },
    });
    expect(resume.reason).toMatch(/^1 workspace\(s\) fleet-pause paused are still not resumed/);
    expect([...(await engine.state.ledger.all()).keys()]).toEqual([
      `${slow.workgroup_id}/${slow.workspace_id}`,
    ]);
  }, 60_000);
});
