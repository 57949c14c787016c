import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import { ApiClient } from '../../../src/api/index.js';
import type { RunSummary } from '../../../src/engine/index.js';
import { InMemoryNotificationMemory, Notifier } from '../../../src/notify/index.js';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { Approvals, AuditTrail } from '../../../src/store/index.js';
import {
  assertBuilt,
  type Engine,
  eventually,
  pauseRequests,
  startCli,
  useEngineHarness,
} from '../../helpers/engine.js';

/**
 * Jobs with `approval:` on a real Redis, worker and simulator: runs wait with their plan, a person
 * decides from the CLI (a process), and what runs is what was approved.
 */

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 3 }, {}, { built: true });

let receiver: ScriptedServer;
beforeAll(async () => {
  receiver = await startScriptedServer();
  receiver.replyJson(200, { ok: true });
});
afterAll(() => receiver.close());

const policy = (expires = '1h') => `version: 1
notifications:
  ops: { url: "${receiver.url}/ops" }
jobs:
  gated-pause:
    schedule: "0 3 * * *"
    action: pause
    target: { workgroups: ["*"] }
    approval: { expires: ${expires}, approvers: [ana] }
    notify: [ops]
`;

function cli(engine: Engine, ...args: string[]) {
  return startCli(args, { REDIS_URL: harness.server.url, NIGHTSHIFT_REDIS_PREFIX: engine.prefix });
}

/** The run's summary once it has `outcome`. */
function outcomeOf(engine: Engine, runId: string, outcome: RunSummary['outcome'], round?: number) {
  return eventually(
    `run ${runId} ${outcome}`,
    async () => {
      const summary = await engine.history.get(runId);
      return summary?.outcome === outcome && (round === undefined || summary.approval?.round === round)
        ? summary
        : undefined;
    },
    20_000,
  );
}

/** Sets one workspace's status through the API, as its owner would, and waits until it is there. */
async function setStatus(action: 'pause' | 'resume', index: number): Promise<void> {
  const ws = harness.sim.state.workspaces[index];
  if (!ws) throw new Error(`no workspace ${index}`);
  const api = new ApiClient({ baseUrl: harness.sim.url, apiKey: DEFAULT_API_KEY, timeoutMs: 5_000 });
  try {
    if (action === 'pause') await api.pauseWorkspace(ws.workgroup_id, ws.workspace_id);
    else await api.resumeWorkspace(ws.workgroup_id, ws.workspace_id);
  } finally {
    await api.close();
  }
  const want = action === 'pause' ? 'Stopped' : 'Active';
  await eventually(`workspace ${index} ${want}`, () => ws.status === want, 10_000);
}

describe('approvals', () => {
  it('a run of a job with approval waits with its plan, touching nothing; a named approver approves it from the CLI and it acts', async () => {
    assertBuilt();
    harness.sim.reset();
    const engine = harness.engine('approval-approve');
    const notifier = new Notifier({
      memory: new InMemoryNotificationMemory(),
      log: engine.log,
      consoleUrl: 'https://ops.example.com/nightshift',
    });
    engine.worker(harness.sim.url, { notifier });
    receiver.requests.length = 0;
    const runId = await engine.enqueue(policy(), 'gated-pause');
    const waiting = await outcomeOf(engine, runId, 'awaiting-approval');
    expect(waiting.counts).toMatchObject({ planned: 3 });
    expect(waiting.approval).toMatchObject({ state: 'pending', round: 1, approvers: ['ana'] });
    expect(waiting.reason).toContain(`nightshift approve ${runId}`);
    expect(pauseRequests(harness.sim).size).toBe(0);
    const told = await eventually('approval-needed sent', () => receiver.requests[0], 10_000);
    expect(JSON.parse(told.body)).toMatchObject({
      events: ['approval-needed'],
      link: `https://ops.example.com/nightshift/runs/${encodeURIComponent(runId)}`,
      runId,
      outcome: 'awaiting-approval',
      reason: expect.stringMatching(
        /^awaiting approval by one of ana until \S+: 3 changes: would pause .*; `nightshift approve /,
      ),
    });

    const listed = cli(engine, 'approvals', '--json');
    expect(await listed.exited).toBe(0);
    expect(JSON.parse(listed.stdout())).toEqual([expect.objectContaining({ runId, state: 'pending' })]);

    const stranger = cli(engine, 'approve', runId, '--by', 'bo');
    expect(await stranger.exited).toBe(2);
    expect(stranger.stderr()).toContain('bo may not decide this run: its job names its approvers (ana)');

    const approve = cli(engine, 'approve', runId, '--by', 'ana', '--note', 'checked', '--json');
    expect(await approve.exited).toBe(0);
    expect(JSON.parse(approve.stdout())).toMatchObject({ runId, state: 'approved', decided: true });

    const done = await outcomeOf(engine, runId, 'succeeded');
    expect(done.counts).toMatchObject({ succeeded: 3 });
    expect(done.approval).toMatchObject({ state: 'approved', decision: { by: 'ana', note: 'checked' } });
    // the sink heard the ask, not the success (not among its default events)
    expect(receiver.requests).toHaveLength(1);
    await notifier.close();
    expect(pauseRequests(harness.sim).size).toBe(3);
    expect(await new Approvals(engine.redis, { prefix: engine.prefix }).get(runId)).toBeUndefined();
    const audit = await new AuditTrail(engine.redis, { prefix: engine.prefix }).list();
    expect(audit.map((entry) => [entry.action, entry.subject, entry.who, entry.why])).toEqual([
      ['approve', runId, 'ana', 'checked'],
    ]);
    // the approval is done with once the run acted: nothing left to decide
    const again = cli(engine, 'reject', runId, '--by', 'ana');
    expect(await again.exited).toBe(2);
  }, 60_000);

  it('a plan that grew since its approval does not run: the run asks again, naming the difference', async () => {
    harness.sim.reset();
    await setStatus('pause', 0);
    const engine = harness.engine('approval-grew');
    const first = engine.worker(harness.sim.url);
    const runId = await engine.enqueue(policy(), 'gated-pause');
    const waiting = await outcomeOf(engine, runId, 'awaiting-approval');
    expect(waiting.counts).toMatchObject({ planned: 2 });
    await first.close(1_000);

    const approve = cli(engine, 'approve', runId, '--by', 'ana');
    expect(await approve.exited).toBe(0);
    // meanwhile the paused workspace is running again: the plan would now pause three
    await setStatus('resume', 0);
    const before = pauseRequests(harness.sim).size;
    engine.worker(harness.sim.url);

    const again = await outcomeOf(engine, runId, 'awaiting-approval', 2);
    expect(again.approval?.state).toBe('pending');
    const name = `${harness.sim.state.workgroups[0]?.name}/${harness.sim.state.workspaces[0]?.name}`;
    expect(again.approval?.changedSince).toEqual([expect.stringContaining(`${name}: would pause`)]);
    expect(again.reason).toContain('the plan changed since it was approved');
    expect(pauseRequests(harness.sim).size).toBe(before);
  }, 60_000);

  it('an approval nobody gives ends the run expired; a waiting run is rejected, not cancelled, and ends rejected; neither touches anything', async () => {
    harness.sim.reset();
    const engine = harness.engine('approval-expire');
    engine.worker(harness.sim.url);
    const expiring = await engine.enqueue(policy('1s'), 'gated-pause', { runId: 'gated-pause@expiring' });
    await outcomeOf(engine, expiring, 'awaiting-approval');
    const expired = await outcomeOf(engine, expiring, 'expired');
    expect(expired.reason).toMatch(/^no approval before \S+: nothing done$/);
    const late = cli(engine, 'approve', expiring, '--by', 'ana');
    expect(await late.exited).toBe(2);

    const rejected = await engine.enqueue(policy(), 'gated-pause', { runId: 'gated-pause@rejected' });
    await outcomeOf(engine, rejected, 'awaiting-approval');
    const cancel = cli(engine, 'cancel', rejected);
    expect(await cancel.exited).toBe(2);
    expect(cancel.stderr()).toContain(`\`nightshift reject ${rejected}\` ends it`);
    const reject = cli(engine, 'reject', rejected, '--by', 'ana', '--note', 'not tonight');
    expect(await reject.exited).toBe(0);
    const summary = await outcomeOf(engine, rejected, 'rejected');
    expect(summary.reason).toBe('rejected by ana: not tonight; nothing done');
    expect(pauseRequests(harness.sim).size).toBe(0);
  }, 60_000);

  it('a run whose plan cannot be made (past its maxTargets) fails, asking nobody and touching nothing', async () => {
    harness.sim.reset();
    const engine = harness.engine('approval-no-plan');
    engine.worker(harness.sim.url);
    const text = policy().replace('    notify: [ops]\n', '    maxTargets: 1\n');
    const runId = await engine.enqueue(text, 'gated-pause');
    const failed = await outcomeOf(engine, runId, 'failed');
    expect(failed.reason).toMatch(/^no plan to approve: .*maxTargets.*; nothing done$/);
    expect(await new Approvals(engine.redis, { prefix: engine.prefix }).get(runId)).toBeUndefined();
    expect(pauseRequests(harness.sim).size).toBe(0);
  }, 30_000);
});
