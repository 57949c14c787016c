import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore, type RunSummary } from '../../../src/engine/index.js';
import { type SimState, seedState } from '../../../src/sim/index.js';
import { type WorkspaceStatus, workspaceStatusFields } from '../../../src/sim/status.js';
import {
  type ActionRun,
  mutatingCalls,
  READ_ONLY_OPERATIONS,
  useActionSim,
  workspacesIn,
} from '../../helpers/actions.js';
import { eventually } from '../../helpers/engine.js';

const policy = (action: string, extra = '') => `version: 1
jobs:
  act:
    schedule: "0 20 * * *"
    action: ${action}
    target: { workgroups: ["dev-alpha"] }
    retry: { attempts: 3, backoff: 1s, strategy: fixed }
${extra}`;

type Workspace = SimState['workspaces'][number];

/**
 * prod-core and dev-alpha, whose workspaces have `statuses` in order. A workspace given as
 * `['Resuming', ms]` is Resuming with a resume that completes `ms` from now (`['Stopping', ms]`
 * likewise with a pause).
 */
function fleet(...statuses: (WorkspaceStatus | ['Resuming' | 'Stopping', number])[]): SimState {
  const state = seedState({ seed: 5, fleet: { workgroups: 2, workspacesPerWorkgroup: statuses.length } });
  const now = Date.now();
  for (const [i, ws] of workspacesIn(state, 'dev-alpha').entries()) {
    const wanted = statuses[i] ?? 'Active';
    if (typeof wanted === 'string') {
      Object.assign(ws, workspaceStatusFields(wanted));
      continue;
    }
    Object.assign(ws, workspaceStatusFields(wanted[0]));
    const kind = wanted[0] === 'Resuming' ? 'resume' : 'pause';
    state.transitions.push({
      kind,
      workspace_id: ws.workspace_id,
      id: `tr-${kind}-${i}`,
      started_at: new Date(now).toISOString(),
      completes_at: new Date(now + wanted[1]).toISOString(),
    });
  }
  return state;
}

const workspacePath = (ws: Workspace, operation: 'pause' | 'resume') =>
  `/controller/v4/v2/workgroups/${ws.workgroup_id}/workspaces/${ws.workspace_id}/${operation}`;

/** Each target as `outcome` or `outcome: reason`, by workspace id. */
const outcomes = (summary: RunSummary) =>
  Object.fromEntries(
    summary.targets.map((t) => [t.workspaceId, t.reason ? `${t.outcome}: ${t.reason}` : t.outcome]),
  );

const targetOf = (summary: RunSummary, ws: Workspace) => {
  const target = summary.targets.find((t) => t.workspaceId === ws.workspace_id);
  if (!target) throw new Error(`no target for ${ws.workspace_id}`);
  return target;
};

/** The simulator's log entries of `operation` calls on one workspace. */
const callsOn = (run: ActionRun, ws: Workspace, operation: string) =>
  run.requests.filter((r) => r.operation === operation && r.path.includes(`/${ws.workspace_id}/`));

describe('pause and resume against the simulator', () => {
  // one story: the pause, then a dry run of the resume, then the resume of what the pause stopped
  const harness = useActionSim(
    () => seedState({ seed: 3, fleet: { workgroups: 4, workspacesPerWorkgroup: 4 } }),
    {
      resetEach: false,
    },
  );
  const devAlpha = () => workspacesIn(harness.sim.state, 'dev-alpha');

  it('pause stops every Active workspace of the target and skips the ones already stopped', async () => {
    const before = devAlpha();
    expect(before).toHaveLength(4);
    const active = before.filter((w) => w.status === 'Active').length;
    const { summary } = await harness.run(policy('pause'), 'act');
    expect(summary.outcome).toBe('succeeded');
    expect(summary.counts.succeeded).toBe(active);
    expect(summary.counts.skipped).toBe(before.length - active);
  });

  it('a dry run of resume calls read-only operations only and plans each stopped workspace', async () => {
    await eventually('the pauses done', () =>
      harness.sim.state.workspaces.every((ws) => ws.status !== 'Stopping'),
    );
    const run = await harness.run(policy('resume'), 'act', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.counts.planned + run.summary.counts.skipped).toBe(run.summary.counts.total);
  });

  it('resume waits until every workspace is Active and reports its time to ready', async () => {
    const { summary } = await harness.run(policy('resume', '    with: { waitReady: 30s }'), 'act');
    expect(summary.outcome).toBe('succeeded');
    for (const target of summary.targets) expect(target.detail?.timeToReadyMs ?? 0).toBeGreaterThanOrEqual(0);
    expect(new Set(devAlpha().map((w) => w.status))).toEqual(new Set(['Active']));
  });
});

describe('pause', () => {
  // transitions of a minute: a workspace the run paused stays Stopping until the test ends
  const harness = useActionSim(() => fleet('Active', 'Active', 'Stopped', 'Stopping', 'Restoring'), {
    proxy: true,
    transitionMs: 60_000,
  });
  const devAlpha = () => workspacesIn(harness.sim.state, 'dev-alpha');
  const ws = (i: number) => devAlpha()[i] as Workspace;

  it('pauses every Active workspace and skips the others with their status as the reason', async () => {
    const [a, b, stopped, stopping, restoring] = devAlpha() as [Workspace, ...Workspace[]];
    const run = await harness.run(policy('pause'), 'act');

    expect(run.summary.outcome).toBe('succeeded');
    expect(outcomes(run.summary)).toEqual({
      [a.workspace_id]: 'succeeded',
      [b?.workspace_id ?? '']: 'succeeded',
      [stopped?.workspace_id ?? '']: 'skipped: already Stopped',
      [stopping?.workspace_id ?? '']: 'skipped: already Stopping',
      [restoring?.workspace_id ?? '']: 'skipped: not Active: Restoring',
    });
    expect(mutatingCalls(run)).toEqual(['pauseWorkspace', 'pauseWorkspace']);
    expect(devAlpha().map((w) => w.status)).toEqual([
      'Stopping',
      'Stopping',
      'Stopped',
      'Stopping',
      'Restoring',
    ]);
    // each pause's request ID is in the record of the workspace it paused
    for (const paused of [a, b] as Workspace[]) {
      const [call] = callsOn(run, paused, 'pauseWorkspace');
      expect(targetOf(run.summary, paused)).toMatchObject({ attempts: 1, requestIds: [call?.requestId] });
    }
  });

  it('a second run finds the paused workspaces Stopping and changes nothing', async () => {
    await harness.run(policy('pause'), 'act');
    const again = await harness.run(policy('pause'), 'act');

    expect(again.summary.outcome).toBe('succeeded');
    expect(again.summary.counts).toMatchObject({ total: 5, skipped: 5 });
    expect(targetOf(again.summary, ws(0)).reason).toBe('already Stopping');
    expect(mutatingCalls(again)).toEqual([]);
  });

  it('a refused pause of a workspace that is in fact Stopping is skipped as already Stopping, after one re-read', async () => {
    const path = workspacePath(ws(0), 'pause');
    // the pause goes through, the answer says Bad-Request
    harness.proxy.refuse({ method: 'POST', path, status: 400, type: 'Bad-Request', forwardFirst: true });
    const run = await harness.run(policy('pause'), 'act');

    expect(run.summary.outcome).toBe('succeeded');
    expect(targetOf(run.summary, ws(0))).toMatchObject({
      outcome: 'skipped',
      reason: 'already Stopping',
      attempts: 1,
    });
    expect(harness.proxy.calls.filter((c) => c.path === path)).toHaveLength(1);
    // the run's own listing, then the re-read after the refusal
    expect(run.requests.filter((r) => r.operation === 'listWorkgroups')).toHaveLength(2);
    expect(ws(0).status).toBe('Stopping');
  });

  it('a refused pause of a workspace still Active fails that target with the API error, and pauses the others', async () => {
    const path = workspacePath(ws(0), 'pause');
    harness.proxy.refuse({ method: 'POST', path, status: 400, type: 'Bad-Request' });
    const run = await harness.run(policy('pause'), 'act');

    expect(run.summary.outcome).toBe('partial');
    const target = targetOf(run.summary, ws(0));
    expect(target).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { status: 400, type: 'Bad-Request', retryable: false },
    });
    const requestId = target.error?.requestId ?? '';
    expect(requestId).toMatch(/^proxy-\d+$/);
    expect(target.requestIds).toContain(requestId);
    expect(target.error?.message).toContain(
      `pauseWorkspace POST ${path} → 400 Bad-Request (RequestID ${requestId}): scripted Bad-Request`,
    );
    expect(run.requests.filter((r) => r.operation === 'listWorkgroups')).toHaveLength(2);
    expect(ws(0).status).toBe('Active');
    expect(targetOf(run.summary, ws(1)).outcome).toBe('succeeded');
  });

  it('a permanent error (Forbidden) fails that target after one attempt, without a retry', async () => {
    const path = workspacePath(ws(1), 'pause');
    harness.proxy.refuse({ method: 'POST', path, status: 403, type: 'Forbidden' });
    const run = await harness.run(policy('pause'), 'act');

    expect(run.summary.outcome).toBe('partial');
    expect(targetOf(run.summary, ws(1))).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { status: 403, type: 'Forbidden', retryable: false },
    });
    expect(harness.proxy.calls.filter((c) => c.path === path)).toHaveLength(1);
    expect(ws(1).status).toBe('Active');
    expect(ws(0).status).toBe('Stopping');
  });

  it('retries a transient server error (500) and then pauses the workspace, once', async () => {
    harness.sim.reset({ state: fleet('Active', 'Stopped') });
    // seed 4: the first pause draws an error, the second passes
    harness.sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['pauseWorkspace'] });
    const run = await harness.run(policy('pause'), 'act');

    expect(run.summary.outcome).toBe('succeeded');
    expect(targetOf(run.summary, ws(0))).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(callsOn(run, ws(0), 'pauseWorkspace').map((r) => r.status)).toEqual([500, 200]);
    expect(ws(0).status).toBe('Stopping');
  });

  it('after a lost answer (500, pause applied), the retry re-reads and skips the workspace as already Stopping', async () => {
    const path = workspacePath(ws(0), 'pause');
    harness.proxy.refuse({
      method: 'POST',
      path,
      status: 500,
      type: 'Internal-Error',
      forwardFirst: true,
      times: 1,
    });
    const run = await harness.run(policy('pause'), 'act');

    expect(run.summary.outcome).toBe('succeeded');
    expect(targetOf(run.summary, ws(0))).toMatchObject({
      outcome: 'skipped',
      reason: 'already Stopping',
      attempts: 2,
    });
    expect(harness.proxy.calls.filter((c) => c.path === path)).toHaveLength(1);
  });

  it('a dry run makes read-only calls only, plans each Active workspace and gives the others the run’s reasons', async () => {
    const [a, b, stopped, stopping, restoring] = devAlpha() as [Workspace, ...Workspace[]];
    const run = await harness.run(policy('pause'), 'act', { dryRun: true });

    expect(run.requests.length).toBeGreaterThan(0);
    expect(run.requests.filter((r) => !READ_ONLY_OPERATIONS.has(r.operation ?? r.path))).toEqual([]);
    expect(outcomes(run.summary)).toEqual({
      [a.workspace_id]: 'planned: would pause (Active)',
      [b?.workspace_id ?? '']: 'planned: would pause (Active)',
      [stopped?.workspace_id ?? '']: 'skipped: already Stopped',
      [stopping?.workspace_id ?? '']: 'skipped: already Stopping',
      [restoring?.workspace_id ?? '']: 'skipped: not Active: Restoring',
    });
    expect(devAlpha().map((w) => w.status)).toEqual(['Active', 'Active', 'Stopped', 'Stopping', 'Restoring']);
  });
});

describe('resume', () => {
  const TRANSITION_MS = 300;
  const harness = useActionSim(
    () => fleet('Stopped', 'Stopped', 'Active', ['Resuming', 400], ['Stopping', 500]),
    {
      proxy: true,
      transitionMs: TRANSITION_MS,
    },
  );
  const devAlpha = () => workspacesIn(harness.sim.state, 'dev-alpha');
  const ws = (i: number) => devAlpha()[i] as Workspace;
  const waiting = '    with: { waitReady: 30s }';

  it('resumes every Stopped workspace, and one still Stopping once it is Stopped, waits until each is Active and reports its time to ready', async () => {
    const [s1, s2, active, resuming, stopping] = devAlpha() as [Workspace, ...Workspace[]];
    const run = await harness.run(policy('resume', waiting), 'act');

    expect(run.summary.outcome).toBe('succeeded');
    expect(outcomes(run.summary)).toEqual({
      [s1.workspace_id]: 'succeeded',
      [s2?.workspace_id ?? '']: 'succeeded',
      [active?.workspace_id ?? '']: 'skipped: already Active',
      [resuming?.workspace_id ?? '']: 'skipped: already Resuming',
      [stopping?.workspace_id ?? '']: 'succeeded',
    });
    expect(mutatingCalls(run)).toEqual(['resumeWorkspace', 'resumeWorkspace', 'resumeWorkspace']);
    for (const resumed of [s1, s2] as Workspace[]) {
      const target = targetOf(run.summary, resumed);
      expect(target.attempts).toBe(1);
      expect(target.detail?.timeToReadyMs).toBeGreaterThanOrEqual(TRANSITION_MS - 50);
      expect(target.requestIds).toEqual(callsOn(run, resumed, 'resumeWorkspace').map((r) => r.requestId));
    }
    // the one already Resuming is waited for like the others
    expect(targetOf(run.summary, resuming as Workspace).detail?.timeToReadyMs).toBeGreaterThan(0);
    expect(devAlpha().map((w) => w.status)).toEqual(['Active', 'Active', 'Active', 'Active', 'Active']);
    // the one Stopping was resumed only once its pause was over: the API refuses it before
    const [resumeOfStopping] = callsOn(run, stopping as Workspace, 'resumeWorkspace');
    expect(resumeOfStopping?.status).toBe(200);
  });

  it('taken over from a worker that tried first, counts time to ready from that worker’s first attempt', async () => {
    const firstTriedAt = Date.now() - 5_000;
    const checkpoints = new MemoryCheckpointStore();
    await checkpoints.saveProgress('act@test', `${ws(0).workgroup_id}/${ws(0).workspace_id}`, {
      firstTriedAt,
    });
    const run = await harness.run(policy('resume', waiting), 'act', { checkpoints });

    const target = targetOf(run.summary, ws(0));
    expect(target).toMatchObject({ outcome: 'succeeded', attempts: 1 });
    expect(target.detail?.timeToReadyMs).toBeGreaterThanOrEqual(5_000 + TRANSITION_MS - 50);
    expect(targetOf(run.summary, ws(1)).detail?.timeToReadyMs).toBeLessThan(5_000);
  });

  it('with waitReady: none, returns once the resume is accepted, without a time to ready, and leaves one Stopping alone', async () => {
    const run = await harness.run(policy('resume', '    with: { waitReady: none }'), 'act');

    expect(targetOf(run.summary, ws(0))).toMatchObject({ outcome: 'succeeded', attempts: 1 });
    expect(targetOf(run.summary, ws(0)).detail).toBeUndefined();
    expect(ws(0).status).toBe('Resuming');
    expect(targetOf(run.summary, ws(4))).toMatchObject({
      outcome: 'skipped',
      reason: 'not Stopped: Stopping',
    });
  });

  it('a refused resume of a workspace still Stopped fails that target with the API error, and resumes the others', async () => {
    const path = workspacePath(ws(0), 'resume');
    harness.proxy.refuse({ method: 'POST', path, status: 400, type: 'Bad-Request' });
    const run = await harness.run(policy('resume', waiting), 'act');

    expect(run.summary.outcome).toBe('partial');
    const target = targetOf(run.summary, ws(0));
    expect(target).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { status: 400, type: 'Bad-Request', retryable: false },
    });
    const requestId = target.error?.requestId ?? '';
    expect(requestId).toMatch(/^proxy-\d+$/);
    expect(target.error?.message).toContain(
      `resumeWorkspace POST ${path} → 400 Bad-Request (RequestID ${requestId}): scripted Bad-Request`,
    );
    expect(ws(0).status).toBe('Stopped');
    expect(targetOf(run.summary, ws(1)).outcome).toBe('succeeded');
  });

  it('a permanent error (Not-Found) fails that target after one attempt, without a retry', async () => {
    const path = workspacePath(ws(1), 'resume');
    harness.proxy.refuse({ method: 'POST', path, status: 404, type: 'Not-Found' });
    const run = await harness.run(policy('resume', waiting), 'act');

    expect(run.summary.outcome).toBe('partial');
    expect(targetOf(run.summary, ws(1))).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { status: 404, type: 'Not-Found', retryable: false },
    });
    expect(harness.proxy.calls.filter((c) => c.path === path)).toHaveLength(1);
    expect(ws(1).status).toBe('Stopped');
  });

  it('a throttled resume (429) is retried after Retry-After, and its time to ready counts from the first attempt', async () => {
    // one resume a second: of the two sent together, the second is throttled with Retry-After: 1
    harness.sim.setFaults({ throttleRps: 1, operations: ['resumeWorkspace'] });
    const run = await harness.run(policy('resume', waiting), 'act');

    expect(run.summary.outcome).toBe('succeeded');
    const throttled = [ws(0), ws(1)].filter((w) => targetOf(run.summary, w).throttled === 1);
    expect(throttled).toHaveLength(1);
    // a throttle is not a failed attempt: both targets spent one
    for (const w of [ws(0), ws(1)]) expect(targetOf(run.summary, w).attempts).toBe(1);
    const slow = throttled[0] as Workspace;
    const calls = callsOn(run, slow, 'resumeWorkspace');
    expect(calls.map((r) => r.status)).toEqual([429, 200]);
    const retriedAfterMs = Date.parse(calls[1]?.time ?? '') - Date.parse(calls[0]?.time ?? '');
    expect(retriedAfterMs).toBeGreaterThanOrEqual(1000);

    const target = targetOf(run.summary, slow);
    expect(target.outcome).toBe('succeeded');
    const timeToReadyMs = Number(target.detail?.timeToReadyMs);
    // from the first attempt: the throttled call and the wait before the retry count
    expect(timeToReadyMs).toBeGreaterThanOrEqual(retriedAfterMs + TRANSITION_MS - 50);
    expect(Math.abs((target.durationMs ?? 0) - timeToReadyMs)).toBeLessThan(100);
  });

  it('a dry run makes read-only calls only, plans each Stopped (or Stopping) workspace and gives the others the run’s reasons', async () => {
    const [s1, s2, active, resuming, stopping] = devAlpha() as [Workspace, ...Workspace[]];
    const run = await harness.run(policy('resume', waiting), 'act', { dryRun: true });

    expect(run.requests.length).toBeGreaterThan(0);
    expect(run.requests.filter((r) => !READ_ONLY_OPERATIONS.has(r.operation ?? r.path))).toEqual([]);
    expect(outcomes(run.summary)).toEqual({
      [s1.workspace_id]: 'planned: would resume (Stopped)',
      [s2?.workspace_id ?? '']: 'planned: would resume (Stopped)',
      [active?.workspace_id ?? '']: 'skipped: already Active',
      [resuming?.workspace_id ?? '']: 'skipped: already Resuming',
      [stopping?.workspace_id ?? '']: 'planned: would resume it once Stopped (Stopping now)',
    });
    expect(ws(0).status).toBe('Stopped');
  });
});

describe('resume of a workspace whose pause takes a minute', () => {
  const harness = useActionSim(() => fleet(['Stopping', 60_000]), { proxy: true, transitionMs: 60_000 });
  const ws = (i: number) => workspacesIn(harness.sim.state, 'dev-alpha')[i] as Workspace;

  it('a workspace still Stopping when waitReady runs out fails naming it, and is never resumed', async () => {
    const stopping = ws(0);
    const run = await harness.run(policy('resume', '    with: { waitReady: 1s }'), 'act');

    const target = targetOf(run.summary, stopping);
    expect(target).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(target.error?.message).toBe(
      `dev-alpha/${stopping.name} not Stopped within 1s, so not resumed: still Stopping when the wait ran out`,
    );
    expect(callsOn(run, stopping, 'resumeWorkspace')).toEqual([]);
    expect(ws(0).status).toBe('Stopping');
  });
});

describe('resume with transitions of a minute', () => {
  const harness = useActionSim(() => fleet('Stopped', ['Resuming', 300], 'Active'), {
    proxy: true,
    transitionMs: 60_000,
  });
  const devAlpha = () => workspacesIn(harness.sim.state, 'dev-alpha');
  const ws = (i: number) => devAlpha()[i] as Workspace;

  it('a workspace not Active within waitReady fails after one attempt; the others are still waited for', async () => {
    const [stopped, resuming, active] = devAlpha() as [Workspace, Workspace, Workspace];
    const run = await harness.run(policy('resume', '    with: { waitReady: 1s }'), 'act');

    expect(run.summary.outcome).toBe('partial');
    const target = targetOf(run.summary, stopped);
    expect(target).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(target.error?.message).toBe(
      `dev-alpha/${stopped.name} not Active within 1s: still Resuming when the wait ran out`,
    );
    expect(targetOf(run.summary, resuming)).toMatchObject({ outcome: 'skipped', reason: 'already Resuming' });
    expect(targetOf(run.summary, resuming).detail?.timeToReadyMs).toBeGreaterThan(0);
    expect(targetOf(run.summary, active)).toMatchObject({ outcome: 'skipped', reason: 'already Active' });
    expect(mutatingCalls(run)).toEqual(['resumeWorkspace']);
  });

  it('a workspace paused again while the resume waits for it fails at once, not after waitReady, and is not resumed twice', async () => {
    const target = ws(0);
    const started = Date.now();
    const running = harness.run(policy('resume', '    with: { waitReady: 45s }'), 'act');
    await eventually('the resume under way', () => ws(0).status === 'Resuming', 10_000);
    // someone pauses it meanwhile (the simulator refuses to pause a Resuming workspace, so its
    // state is set as a pause would leave it: Stopping, on its way to Stopped)
    const state = structuredClone(harness.sim.state);
    const paused = state.workspaces.find((w) => w.workspace_id === target.workspace_id) as Workspace;
    Object.assign(paused, workspaceStatusFields('Stopping'));
    state.transitions = state.transitions.filter(
      (t) => !('workspace_id' in t) || t.workspace_id !== target.workspace_id,
    );
    state.transitions.push({
      kind: 'pause',
      workspace_id: target.workspace_id,
      id: 'tr-pause-by-hand',
      started_at: new Date().toISOString(),
      completes_at: new Date(Date.now() + 60_000).toISOString(),
    });
    harness.sim.reset({ state });
    const run = await running;

    expect(Date.now() - started).toBeLessThan(15_000);
    expect(targetOf(run.summary, target)).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(targetOf(run.summary, target).error?.message).toBe(
      `dev-alpha/${target.name} paused again while the resume waited for it, by another run or by hand (now Stopping); not resumed a second time`,
    );
    expect(ws(0).status).toBe('Stopping');
  });

  it('a workspace found Stopped again after its resume fails at the first listing asked for after the resume was answered, even if no poll saw it come up', async () => {
    const target = ws(0);
    const started = Date.now();
    const running = harness.run(policy('resume', '    with: { waitReady: 45s }'), 'act');
    await eventually('the resume under way', () => ws(0).status === 'Resuming', 10_000);
    // paused and stopped again at once, as seen by a resume whose polls failed meanwhile
    const state = structuredClone(harness.sim.state);
    const stopped = state.workspaces.find((w) => w.workspace_id === target.workspace_id) as Workspace;
    Object.assign(stopped, workspaceStatusFields('Stopped'));
    state.transitions = state.transitions.filter(
      (t) => !('workspace_id' in t) || t.workspace_id !== target.workspace_id,
    );
    harness.sim.reset({ state });
    const run = await running;

    expect(Date.now() - started).toBeLessThan(5_000);
    expect(targetOf(run.summary, target)).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(targetOf(run.summary, target).error?.message).toBe(
      `dev-alpha/${target.name} paused again while the resume waited for it, by another run or by hand (now Stopped); not resumed a second time`,
    );
    expect(ws(0).status).toBe('Stopped');
  });

  it('a refused resume of a workspace that is in fact Resuming is skipped as already Resuming, after one re-read', async () => {
    const path = workspacePath(ws(0), 'resume');
    harness.proxy.refuse({ method: 'POST', path, status: 400, type: 'Bad-Request', forwardFirst: true });
    const run = await harness.run(policy('resume', '    with: { waitReady: none }'), 'act');

    expect(run.summary.outcome).toBe('succeeded');
    expect(targetOf(run.summary, ws(0))).toMatchObject({
      outcome: 'skipped',
      reason: 'already Resuming',
      attempts: 1,
    });
    expect(harness.proxy.calls.filter((c) => c.path === path)).toHaveLength(1);
    expect(run.requests.filter((r) => r.operation === 'listWorkgroups')).toHaveLength(2);
    expect(ws(0).status).toBe('Resuming');
  });
});
