import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Ownership, RunSummary } from '../../../src/engine/index.js';
import { type SimState, seedState } from '../../../src/sim/index.js';
import { workspaceStatusFields } from '../../../src/sim/status.js';
import { useActionSim, workspacesIn } from '../../helpers/actions.js';
import { Engine, eventually } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';

/**
 * The ledger's rules of evidence, one test each: ownership ends only on nightshift's resume or a
 * listing asked for after the pause was answered that shows the workspace running; a refusal, a
 * listing the pause may postdate, or an answer nobody heard never ends it. Each of these failed
 * under the rule it replaces (a listing within 10 s of a pause, by wall clocks, was "too early").
 */

const POLICY = `version: 1
defaults:
  retry: { attempts: 2, backoff: 1s }
targets:
  dev: { workgroups: ["dev-alpha"] }
jobs:
  evening-pause:
    schedule: "0 20 * * *"
    action: pause
    target: dev
  morning-resume:
    schedule: "30 7 * * *"
    action: resume
    target: dev
    with: { waitReady: none, onlyPausedBy: evening-pause }
`;

type Workspace = SimState['workspaces'][number];

/** dev-alpha: three Active workspaces. */
function fleet(): SimState {
  const state = seedState({ seed: 7, fleet: { workgroups: 2, workspacesPerWorkgroup: 3 } });
  for (const ws of workspacesIn(state, 'dev-alpha')) Object.assign(ws, workspaceStatusFields('Active'));
  return state;
}

const keyOf = (ws: Workspace) => `${ws.workgroup_id}/${ws.workspace_id}`;
const outcomeOf = (summary: RunSummary, ws: Workspace) => {
  const target = summary.targets.find((t) => t.workspaceId === ws.workspace_id);
  return target?.reason ? `${target.outcome}: ${target.reason}` : target?.outcome;
};

describe('ownership by the order of evidence, not by clocks', () => {
  const harness = useActionSim(fleet, { transitionMs: 100, proxy: true });
  let redis: TestRedis;
  let engine: Engine | undefined;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });
  afterAll(async () => {
    await redis?.stop();
  });

  const devAlpha = () => workspacesIn(harness.sim.state, 'dev-alpha');
  const start = () => {
    engine = new Engine(redis.url, 'order');
    engine.worker(harness.proxy.sim.url);
    return engine;
  };
  const run = async (running: Engine, job: string) =>
    running.waitForRun(await running.enqueue(POLICY, job), 20_000);
  const owned = (running: Engine) => running.state.ledger.all();
  const pausesAccepted = (ws: Workspace) =>
    harness.sim
      .requests()
      .filter(
        (entry) =>
          entry.operation === 'pauseWorkspace' &&
          entry.status === 200 &&
          entry.path.includes(`/${ws.workspace_id}/`),
      );
  const allStopped = () =>
    eventually('dev-alpha Stopped', () => devAlpha().every((ws) => ws.status === 'Stopped'));

  it('paused, started by hand, and paused again at once: every workspace is paused again, the new pause owned', async () => {
    const running = start();
    const first = await run(running, 'evening-pause');
    expect(first.counts).toMatchObject({ succeeded: 3 });
    await allStopped();
    for (const ws of devAlpha()) Object.assign(ws, workspaceStatusFields('Active'));

    const again = await run(running, 'evening-pause');
    expect(again.counts).toMatchObject({ succeeded: 3, skipped: 0 });
    for (const ws of devAlpha()) expect(pausesAccepted(ws)).toHaveLength(2);
    const records = await owned(running);
    for (const ws of devAlpha())
      expect(records.get(keyOf(ws))).toMatchObject({ runId: again.runId, state: 'confirmed' });
    const intervals = await running.state.ledger.intervalsSince(new Date(0));
    expect(intervals.map((i) => i.endedBy)).toEqual(['seen-active', 'seen-active', 'seen-active']);
  });

  it('a listing asked for before the pause was answered never ends its ownership, however long ago the pause looks by the clock', async () => {
    const running = start();
    const [ws] = devAlpha() as [Workspace];
    // a pause answered after any listing the resume below asks for (its confirmation numbered
    // later), stamped an hour ago by a clock that is not this machine's
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const later = (await running.state.ledger.sequence()) + 1_000;
    const record: Ownership = {
      key: keyOf(ws),
      workgroupId: ws.workgroup_id,
      workspaceId: ws.workspace_id,
      owner: 'evening-pause',
      ownerKind: 'job',
      runId: 'evening-pause@elsewhere',
      state: 'confirmed',
      intendedAt: hourAgo,
      pausedAt: hourAgo,
      confirmSeq: later,
    };
    await running.state.ledger.put(record);

    const resume = await run(running, 'morning-resume');
    expect(outcomeOf(resume, ws)).toBe('skipped: already Active');
    expect((await owned(running)).get(keyOf(ws))).toMatchObject({ runId: 'evening-pause@elsewhere' });
  });

  it('a pause refused (400) because the call of an intent on record already made it stays owned: the refusal never ends it', async () => {
    const running = start();
    const [ws] = devAlpha() as [Workspace];
    // an earlier run's intent whose answer nobody heard; its call lands just as this run's goes out
    await running.state.ledger.intend({
      key: keyOf(ws),
      workgroupId: ws.workgroup_id,
      workspaceId: ws.workspace_id,
      owner: 'evening-pause',
      ownerKind: 'job',
      runId: 'evening-pause@lost',
      state: 'intent',
      intendedAt: new Date(Date.now() - 3_600_000).toISOString(),
      intentId: 'lost-answer',
    });
    harness.proxy.refuse({
      method: 'POST',
      path: `/controller/v4/v2/workgroups/${ws.workgroup_id}/workspaces/${ws.workspace_id}/pause`,
      status: 400,
      type: 'Bad-Request',
      forwardFirst: true,
      times: 1,
    });

    const pause = await run(running, 'evening-pause');
    expect(outcomeOf(pause, ws)).toMatch(
      /^succeeded: paused by an earlier attempt of this run \(now Stopp(ing|ed)\)/,
    );
    expect((await owned(running)).get(keyOf(ws))).toMatchObject({
      owner: 'evening-pause',
      state: 'confirmed',
    });
    await allStopped();
    const resume = await run(running, 'morning-resume');
    expect(outcomeOf(resume, ws)).toBe('succeeded');
  });

  it('a pause refused (400) because someone else paused it first, with no intent on record, is theirs: not owned, not resumed', async () => {
    const running = start();
    const [ws] = devAlpha() as [Workspace];
    harness.proxy.refuse({
      method: 'POST',
      path: `/controller/v4/v2/workgroups/${ws.workgroup_id}/workspaces/${ws.workspace_id}/pause`,
      status: 400,
      type: 'Bad-Request',
      forwardFirst: true,
      times: 1,
    });
    const pause = await run(running, 'evening-pause');
    expect(outcomeOf(pause, ws)).toMatch(/^skipped: already Stopp(ing|ed)$/);
    expect((await owned(running)).has(keyOf(ws))).toBe(false);
    expect((await running.state.ledger.journal([keyOf(ws)])).size).toBe(0);
  });
});
