import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Ownership, RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_API_KEY, type SimState, seedState } from '../../../src/sim/index.js';
import { workspaceStatusFields } from '../../../src/sim/status.js';
import { READ_ONLY_OPERATIONS, useActionSim, workspacesIn } from '../../helpers/actions.js';
import { assertBuilt, Engine, eventually, startCli } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';

/** The cost-saving routine: the morning resume undoes only what the evening pause did. */
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
    with: { waitReady: 3s, onlyPausedBy: evening-pause }
`;

type Workspace = SimState['workspaces'][number];

/** dev-alpha: three Active workspaces and two someone keeps Stopped on purpose (prod-core beside it). */
function fleet(): SimState {
  const state = seedState({ seed: 5, fleet: { workgroups: 2, workspacesPerWorkgroup: 5 } });
  const statuses = ['Active', 'Active', 'Active', 'Stopped', 'Stopped'] as const;
  for (const [i, ws] of workspacesIn(state, 'dev-alpha').entries())
    Object.assign(ws, workspaceStatusFields(statuses[i] ?? 'Active'));
  return state;
}

/** Each target as `outcome` or `outcome: reason`, by workspace id. */
const outcomes = (summary: RunSummary) =>
  Object.fromEntries(
    summary.targets.map((t) => [t.workspaceId, t.reason ? `${t.outcome}: ${t.reason}` : t.outcome]),
  );

/** `outcome` for each of `workspaces`, by workspace id. */
const each = (workspaces: readonly Workspace[], outcome: string) =>
  Object.fromEntries(workspaces.map((ws) => [ws.workspace_id, outcome]));

const keyOf = (ws: Workspace) => `${ws.workgroup_id}/${ws.workspace_id}`;

describe('the ownership ledger: pause and resume', () => {
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
  /** The three Active workspaces the pause will pause, and the two kept Stopped. */
  const groups = () => {
    const all = devAlpha();
    return { active: all.slice(0, 3), keptStopped: all.slice(3) };
  };
  /** A worker acting through the refusing proxy, so a test can refuse calls. */
  const startEngine = () => {
    engine = new Engine(redis.url, 'ledger');
    engine.worker(harness.proxy.sim.url);
    return engine;
  };
  /** The simulator's requests after `since` that change something, as [operation, workspace id]. */
  const mutatingSince = (since: number) =>
    harness.sim
      .requests()
      .filter((entry) => entry.seq > since && !READ_ONLY_OPERATIONS.has(entry.operation ?? entry.path))
      .map((entry) => [entry.operation, entry.path.split('/').at(-2)]);
  const pauseCalls = (ws: Workspace) =>
    harness.sim
      .requests()
      .filter((entry) => entry.operation === 'pauseWorkspace' && entry.path.includes(`/${ws.workspace_id}/`));
  const lastSeq = () => harness.sim.requests().at(-1)?.seq ?? 0;
  const run = async (running: Engine, job: string) =>
    running.waitForRun(await running.enqueue(POLICY, job), 20_000);
  const owned = async (running: Engine) => running.state.ledger.all();
  const allStopped = () =>
    eventually('the paused workspaces Stopped', () => devAlpha().every((ws) => ws.status === 'Stopped'));

  it('records each pause it makes as confirmed, with run, time and request id, and never owns what was already Stopped', async () => {
    const running = startEngine();
    const { active, keptStopped } = groups();
    const pause = await run(running, 'evening-pause');
    expect(pause).toMatchObject({ outcome: 'succeeded', counts: { total: 5, succeeded: 3, skipped: 2 } });

    const records = await owned(running);
    expect([...records.keys()].sort()).toEqual(active.map(keyOf).sort());
    for (const ws of active) {
      const record = records.get(keyOf(ws)) as Ownership;
      const [call] = pauseCalls(ws);
      expect(record).toMatchObject({
        owner: 'evening-pause',
        ownerKind: 'job',
        runId: pause.runId,
        state: 'confirmed',
        requestId: call?.requestId,
      });
      expect(call?.requestId).toEqual(expect.any(String));
      expect(Date.parse(record.pausedAt as string)).toBeGreaterThanOrEqual(Date.parse(record.intendedAt));
    }
    for (const ws of keptStopped) expect(records.has(keyOf(ws))).toBe(false);
  });

  it('a second pause that finds everything Stopped changes nothing: the resume still resumes every workspace the first one paused', async () => {
    const running = startEngine();
    const { active, keptStopped } = groups();
    await run(running, 'evening-pause');
    await allStopped();
    const again = await run(running, 'evening-pause');
    expect(again).toMatchObject({ outcome: 'succeeded', counts: { total: 5, skipped: 5 } });
    expect(outcomes(again)[active[0]?.workspace_id as string]).toMatch(
      /^skipped: already Stopped \(paused by job evening-pause since /,
    );
    expect(outcomes(again)[keptStopped[0]?.workspace_id as string]).toBe('skipped: already Stopped');

    const since = lastSeq();
    const resume = await run(running, 'morning-resume');
    expect(resume.outcome).toBe('succeeded');
    expect(outcomes(resume)).toEqual({
      ...each(active, 'succeeded'),
      ...each(keptStopped, 'skipped: not paused by evening-pause (nightshift does not own its pause)'),
    });
    expect(resume.evidence).toMatchObject({ onlyPausedBy: { job: 'evening-pause', owned: 3 } });
    expect(mutatingSince(since).sort()).toEqual(
      active.map((ws) => ['resumeWorkspace', ws.workspace_id]).sort(),
    );
    expect(devAlpha().map((ws) => ws.status)).toEqual(['Active', 'Active', 'Active', 'Stopped', 'Stopped']);
    expect((await owned(running)).size).toBe(0);
  });

  it('a resume that fails for one workspace keeps it owned: the next pause changes nothing and the next resume starts it', async () => {
    const running = startEngine();
    const { active } = groups();
    const [unlucky] = active as [Workspace];
    await run(running, 'evening-pause');
    await allStopped();
    harness.proxy.refuse({
      method: 'POST',
      path: `/controller/v4/v2/workgroups/${unlucky.workgroup_id}/workspaces/${unlucky.workspace_id}/resume`,
      status: 500,
      type: 'Internal-Error',
      times: 2,
    });
    const failing = await run(running, 'morning-resume');
    expect(failing.outcome).toBe('partial');
    expect(outcomes(failing)[unlucky.workspace_id]).toBe('failed');
    expect(failing.reason).toMatch(
      /^1 workspace\(s\) evening-pause paused are still not resumed \(dev-alpha\//,
    );
    expect((await owned(running)).has(keyOf(unlucky))).toBe(true);

    // the next evening: the two that came up are paused again, the stranded one is left as it is
    const pauseAgain = await run(running, 'evening-pause');
    expect(outcomes(pauseAgain)[unlucky.workspace_id]).toMatch(/^skipped: already Stopped \(paused by job/);
    expect(pauseAgain.counts).toMatchObject({ succeeded: 2, skipped: 3 });
    expect((await owned(running)).get(keyOf(unlucky))).toMatchObject({ owner: 'evening-pause' });
    await allStopped();

    const since = lastSeq();
    const resume = await run(running, 'morning-resume');
    expect(resume.outcome).toBe('succeeded');
    expect(outcomes(resume)).toMatchObject(each(active, 'succeeded'));
    expect(mutatingSince(since)).toContainEqual(['resumeWorkspace', unlucky.workspace_id]);
    expect((await owned(running)).size).toBe(0);
  });

  it('a workspace started by hand after its pause is nobody’s any more: the resume leaves it, and the next pause owns it again', async () => {
    const running = startEngine();
    const { active } = groups();
    const [started] = active as [Workspace];
    await run(running, 'evening-pause');
    await allStopped();
    // someone starts it; the pause is older than a listing may lag behind
    Object.assign(started, workspaceStatusFields('Active'));
    const record = (await owned(running)).get(keyOf(started)) as Ownership;
    const longAgo = new Date(Date.now() - 60_000).toISOString();
    await running.state.ledger.put({ ...record, intendedAt: longAgo, pausedAt: longAgo });

    const since = lastSeq();
    const resume = await run(running, 'morning-resume');
    expect(outcomes(resume)[started.workspace_id]).toBe('skipped: already Active');
    expect(mutatingSince(since)).not.toContainEqual(['resumeWorkspace', started.workspace_id]);
    expect((await owned(running)).has(keyOf(started))).toBe(false);
    const [interval] = await running.state.ledger.intervalsSince(new Date(0));
    expect(interval).toMatchObject({ key: keyOf(started), owner: 'evening-pause', endedBy: 'seen-active' });

    const pause = await run(running, 'evening-pause');
    expect(outcomes(pause)[started.workspace_id]).toBe('succeeded');
    expect((await owned(running)).get(keyOf(started))).toMatchObject({
      runId: pause.runId,
      state: 'confirmed',
    });
  });

  it('a pause whose answer was lost is still owned: its intent was written before the call, so the retry confirms it', async () => {
    const running = startEngine();
    const [lost] = groups().active as [Workspace];
    harness.proxy.refuse({
      method: 'POST',
      path: `/controller/v4/v2/workgroups/${lost.workgroup_id}/workspaces/${lost.workspace_id}/pause`,
      status: 500,
      type: 'Internal-Error',
      forwardFirst: true,
      times: 1,
    });
    const pause = await run(running, 'evening-pause');
    expect(pause.outcome).toBe('succeeded');
    expect(outcomes(pause)[lost.workspace_id]).toMatch(/^succeeded: paused by this run before/);
    expect(pauseCalls(lost)).toHaveLength(1);
    expect((await owned(running)).get(keyOf(lost))).toMatchObject({ runId: pause.runId, state: 'confirmed' });
  });

  it('a resume that resumes nothing while the job still owns a workspace it cannot start yet ends partial', async () => {
    const running = startEngine();
    const { active } = groups();
    await run(running, 'evening-pause');
    await allStopped();
    // the other two resume; this one is still on its way down
    const [slow] = active as [Workspace];
    Object.assign(slow, workspaceStatusFields('Stopping'));
    harness.sim.state.transitions.splice(0);
    const resume = await run(running, 'morning-resume');
    expect(resume.outcome).toBe('partial');
    // waited for within waitReady, never resumed: its pause never ends here
    expect(resume.targets.find((t) => t.workspaceId === slow.workspace_id)).toMatchObject({
      outcome: 'failed',
      error: { message: expect.stringContaining('not Stopped within 3s, so not resumed: still Stopping') },
    });
    expect(resume.reason).toContain('1 workspace(s) evening-pause paused are still not resumed');
    expect((await owned(running)).has(keyOf(slow))).toBe(true);
  });

  describe('from the command line', () => {
    let file: string;
    let env: Record<string, string>;
    beforeAll(() => {
      assertBuilt();
      file = join(mkdtempSync(join(tmpdir(), 'nightshift-ledger-')), 'policy.yaml');
      writeFileSync(file, POLICY);
      env = {
        NIGHTSHIFT_API_URL: harness.sim.url,
        NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
        // stdout holds the JSON alone
        NIGHTSHIFT_LOG_LEVEL: 'silent',
      };
    });

    it('run --inline records its pauses in the ledger when REDIS_URL is set, so a queued resume resumes them', async () => {
      const running = startEngine();
      const { active } = groups();
      const cli = startCli(['run', file, 'evening-pause', '--inline', '--json', '--quiet'], {
        ...env,
        REDIS_URL: redis.url,
        NIGHTSHIFT_REDIS_PREFIX: running.prefix,
      });
      expect(await cli.exited, cli.output()).toBe(0);
      const pause = JSON.parse(cli.output()) as RunSummary;
      expect([...(await owned(running)).values()].map((r) => [r.key, r.runId, r.state])).toEqual(
        expect.arrayContaining(active.map((ws) => [keyOf(ws), pause.runId, 'confirmed'])),
      );
      await allStopped();
      const resume = await run(running, 'morning-resume');
      expect(resume.counts).toMatchObject({ succeeded: 3, skipped: 2 });
    });

    it('plan reads the ledger and plans only the workspaces the pause job owns, with read-only calls', async () => {
      const running = startEngine();
      const { active, keptStopped } = groups();
      await run(running, 'evening-pause');
      await allStopped();

      const since = lastSeq();
      const cli = startCli(['plan', file, '--job', 'morning-resume', '--json'], {
        ...env,
        REDIS_URL: redis.url,
        NIGHTSHIFT_REDIS_PREFIX: running.prefix,
      });
      expect(await cli.exited, cli.output()).toBe(0);
      const [plan] = JSON.parse(cli.output()) as RunSummary[];
      expect(plan).toMatchObject({ job: 'morning-resume', dryRun: true, outcome: 'succeeded' });
      expect(outcomes(plan as RunSummary)).toEqual({
        ...each(active, 'planned: would resume (Stopped)'),
        ...each(keptStopped, 'skipped: not paused by evening-pause (nightshift does not own its pause)'),
      });
      expect(mutatingSince(since)).toEqual([]);
    });

    it('plan without REDIS_URL says for each stopped workspace what it cannot know, and exits 0', async () => {
      for (const ws of devAlpha()) Object.assign(ws, workspaceStatusFields('Stopped'));
      const since = lastSeq();
      const cli = startCli(['plan', file, '--job', 'morning-resume', '--json'], { ...env, REDIS_URL: '' });
      expect(await cli.exited, cli.output()).toBe(0);
      const [plan] = JSON.parse(cli.output()) as RunSummary[];
      expect(outcomes(plan as RunSummary)).toEqual(
        each(
          devAlpha(),
          'planned: would resume it if evening-pause paused it; who paused it is unknown without Redis (set REDIS_URL: the ownership ledger is there)',
        ),
      );
      expect(mutatingSince(since)).toEqual([]);
    });

    it('run --inline without REDIS_URL fails with the reason before touching any workspace', async () => {
      const since = lastSeq();
      const cli = startCli(['run', file, 'morning-resume', '--inline', '--json'], { ...env, REDIS_URL: '' });
      expect(await cli.exited, cli.output()).toBe(1);
      const summary = JSON.parse(cli.output()) as RunSummary;
      expect(summary).toMatchObject({
        outcome: 'failed',
        reason:
          'onlyPausedBy needs the ownership ledger in Redis: set REDIS_URL, or run the job through a worker',
        counts: { total: 0 },
        targets: [],
      });
      expect(mutatingSince(since)).toEqual([]);
    });
  });
});
