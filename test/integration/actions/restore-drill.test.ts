import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { type DrillRecord, newDrillRecord } from '../../../jobs/support/drill-record.js';
import { ApiClient } from '../../../src/api/index.js';
import { MemoryCheckpointStore } from '../../../src/engine/index.js';
import { parsePolicy } from '../../../src/policy/index.js';
import { DEFAULT_API_KEY, DEFAULT_BEARER_TOKEN, type SimState, seedState } from '../../../src/sim/index.js';
import { type WorkspaceStatus, workspaceStatusFields } from '../../../src/sim/status.js';
import {
  type ActionRun,
  type ActionSim,
  mutatingCalls,
  useActionSim,
  workgroupNamed,
  workspacesIn,
} from '../../helpers/actions.js';

type Drill = SimState['workspaces'][number];

/** `with:` written as JSON, which YAML reads as a flow mapping. */
const policy = (params: Record<string, unknown>, retry = '{ attempts: 3, backoff: 1s }') => `version: 1
jobs:
  drill:
    schedule: "0 6 * * 1"
    action: restore-drill
    retry: ${retry}
    with: ${JSON.stringify(params)}
`;

/** A drill of `ops/drill` from `backupId`; `more` adds to (or overrides) what `with:` says. */
const drillPolicy = (backupId: string, more: Record<string, unknown> = {}, retry?: string) =>
  policy({ workgroup: 'ops', workspace: 'drill', backupId, ...more }, retry);

/** A 4×4 fleet (so `ops/drill` exists) with the drill workspace in the given status. */
function drillState(status: WorkspaceStatus): SimState {
  const state = seedState({ seed: 11, fleet: { workgroups: 4, workspacesPerWorkgroup: 4 } });
  const drill = workspacesIn(state, 'ops').find((ws) => ws.name === 'drill');
  if (!drill) throw new Error('seeded fleet has no ops/drill');
  Object.assign(drill, workspaceStatusFields(status));
  return state;
}

/** Resets the harness's simulator to a fleet whose drill workspace is in `status`. */
function arrange(harness: ActionSim, status: WorkspaceStatus) {
  const { sim } = harness;
  sim.reset({ state: drillState(status) });
  const ops = workgroupNamed(sim.state, 'ops');
  const found = workspacesIn(sim.state, 'ops').find((ws) => ws.name === 'drill') as Drill;
  const backups = sim.state.backups.filter((bk) => bk.workspace_id === found.workspace_id);
  const backup = backups[0];
  const otherBackup = sim.state.backups.find((bk) => bk.workspace_id !== found.workspace_id);
  if (!backup || !otherBackup) throw new Error('seeded fleet has no backups');
  const drill = () => sim.state.workspaces.find((ws) => ws.workspace_id === found.workspace_id) as Drill;
  return { sim, ops, drill, backup, otherBackup };
}

const operations = (run: ActionRun, name: string) => run.requests.filter((entry) => entry.operation === name);

/**
 * Plays the first execution of a drill whose worker died after the API accepted its restore: sends
 * the restore, and leaves the progress record that execution wrote, for a second execution to
 * take over from. Resolves with the checkpoints holding it and the restore's request ID.
 */
async function firstExecutionAccepted(
  harness: ActionSim,
  backupId: string,
): Promise<{ checkpoints: MemoryCheckpointStore; requestId: string; acceptedAt: number }> {
  const { sim } = harness;
  const drill = workspacesIn(sim.state, 'ops').find((ws) => ws.name === 'drill') as Drill;
  const api = new ApiClient({ baseUrl: sim.url, apiKey: DEFAULT_API_KEY, bearerToken: DEFAULT_BEARER_TOKEN });
  const over = { version: drill.version_number ?? null, lastModified: drill.last_modified_time ?? null };
  const sentAt = Date.now();
  let requestId: string;
  try {
    ({ requestId = '' } = await api.restoreBackup(drill.workgroup_id, drill.workspace_id, backupId));
  } finally {
    await api.close();
  }
  const acceptedAt = Date.now();
  const record: DrillRecord = {
    ...newDrillRecord(),
    attempts: 1,
    executions: 1,
    startedAt: new Date(sentAt).toISOString(),
    restoreStartedAt: sentAt,
    restoredOver: over,
    restoreAccepted: true,
    restoreAcceptedAt: acceptedAt,
    restoreAcceptedBy: 1,
    restoreCalls: [{ execution: 1, sentAt, answeredAt: acceptedAt, outcome: 'accepted', requestId }],
    restoreRequestIds: [requestId],
  };
  const checkpoints = new MemoryCheckpointStore();
  await checkpoints.saveProgress('drill@test', `${drill.workgroup_id}/${drill.workspace_id}`, record);
  return { checkpoints, requestId, acceptedAt };
}

describe('restore-drill against the simulator', () => {
  const harness = useActionSim(() => drillState('Active'));

  it('restores the backup into an Active drill workspace, checks the counts, pauses it and records the evidence', async () => {
    const { ops, drill, backup } = arrange(harness, 'Active');
    const expected = { vertices: backup.vertex_count, edges: { min: backup.edge_count } };
    const run = await harness.run(drillPolicy(backup.backup_id, { expect: expected }), 'drill');

    expect(run.summary.outcome).toBe('succeeded');
    expect(mutatingCalls(run)).toEqual(['restoreBackup', 'pauseWorkspace']);
    expect(drill().vertex_count).toBe(backup.vertex_count);
    expect(drill().edge_count).toBe(backup.edge_count);
    expect(['Stopping', 'Stopped']).toContain(drill().status);

    const evidence = run.summary.evidence ?? {};
    const restoreIds = operations(run, 'restoreBackup').map((entry) => entry.requestId);
    expect(evidence).toMatchObject({
      backupId: backup.backup_id,
      workgroupId: ops.workgroup_id,
      workgroupName: 'ops',
      workspaceId: drill().workspace_id,
      workspaceName: 'drill',
      passed: true,
      resumedFirst: false,
      restoreFoundUnderWay: false,
      counts: {
        observed: { vertices: backup.vertex_count, edges: backup.edge_count },
        expected,
      },
      resumeRequestIds: [],
      restoreRequestIds: restoreIds,
      afterwards: { requested: 'pause', outcome: 'paused' },
    });
    expect(evidence.timeToRestoreMs).toBeGreaterThan(0);
    expect(Date.parse(String(evidence.restoredAt))).toBeGreaterThanOrEqual(
      Date.parse(String(evidence.startedAt)),
    );
    expect(run.summary.targets[0]?.detail).toMatchObject({
      vertices: backup.vertex_count,
      afterwards: 'paused',
    });
  });

  it('resumes a Stopped drill workspace and waits until it is Active before restoring', async () => {
    const { drill, backup } = arrange(harness, 'Stopped');
    const run = await harness.run(
      drillPolicy(backup.backup_id, { workspace: drill().workspace_id }),
      'drill',
    );

    expect(run.summary.outcome).toBe('succeeded');
    expect(mutatingCalls(run)).toEqual(['resumeWorkspace', 'restoreBackup', 'pauseWorkspace']);
    // the restore went in only after a listing showed the workspace Active again
    const restoreSeq = operations(run, 'restoreBackup')[0]?.seq ?? 0;
    const resumeSeq = operations(run, 'resumeWorkspace')[0]?.seq ?? 0;
    const listsBetween = run.requests.filter(
      (entry) => entry.operation === 'listWorkgroups' && entry.seq > resumeSeq && entry.seq < restoreSeq,
    );
    expect(listsBetween.length).toBeGreaterThan(0);
    expect(run.summary.evidence).toMatchObject({ resumedFirst: true, passed: true });
  });

  it('records the request ID of the resume it made, beside those of the restore and the pause', async () => {
    const { backup } = arrange(harness, 'Stopped');
    const run = await harness.run(drillPolicy(backup.backup_id), 'drill');

    expect(run.summary.outcome).toBe('succeeded');
    const [resumeId] = operations(run, 'resumeWorkspace').map((entry) => entry.requestId);
    const [restoreId] = operations(run, 'restoreBackup').map((entry) => entry.requestId);
    const [pauseId] = operations(run, 'pauseWorkspace').map((entry) => entry.requestId);
    expect(resumeId).toMatch(/\S/);
    expect(run.summary.evidence).toMatchObject({
      resumedFirst: true,
      resumeRequestIds: [resumeId],
      restoreRequestIds: [restoreId],
      afterwards: { outcome: 'paused', requestId: pauseId },
    });
    expect(run.summary.targets[0]?.requestIds).toContain(resumeId);
  });

  it('a transient resume error is retried, and the evidence keeps the request IDs of both resume calls', async () => {
    const { sim, backup } = arrange(harness, 'Stopped');
    // with this seed the first resume call draws an error and the second passes
    sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['resumeWorkspace'] });
    const run = await harness.run(drillPolicy(backup.backup_id), 'drill');

    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets[0]?.attempts).toBe(2);
    const resumes = operations(run, 'resumeWorkspace');
    expect(resumes.map((entry) => entry.status)).toEqual([500, 200]);
    expect(run.summary.evidence).toMatchObject({
      resumedFirst: true,
      resumeRequestIds: resumes.map((entry) => entry.requestId),
      passed: true,
    });
    expect(mutatingCalls(run)).toEqual([
      'resumeWorkspace',
      'resumeWorkspace',
      'restoreBackup',
      'pauseWorkspace',
    ]);
  });

  it('a count mismatch fails the target with a clear message and a finding, and the workspace is still paused', async () => {
    const { drill, backup } = arrange(harness, 'Active');
    const expected = { vertices: backup.vertex_count + 1 };
    const run = await harness.run(drillPolicy(backup.backup_id, { expect: expected }), 'drill');

    expect(run.summary.outcome).toBe('failed');
    const [target] = run.summary.targets;
    expect(target?.attempts).toBe(1);
    expect(target?.error?.message).toBe(
      `restored ops/drill from ${backup.backup_id} shows vertices ${backup.vertex_count} (expected ${expected.vertices})`,
    );
    expect(run.summary.findings).toEqual([
      expect.objectContaining({
        rule: 'restore-drill/count-mismatch',
        severity: 'critical',
        subject: 'ops/drill',
      }),
    ]);
    expect(mutatingCalls(run)).toEqual(['restoreBackup', 'pauseWorkspace']);
    expect(['Stopping', 'Stopped']).toContain(drill().status);
    expect(run.summary.evidence).toMatchObject({ passed: false, afterwards: { outcome: 'paused' } });
  });

  it('afterwards: leave keeps the restored workspace running', async () => {
    const { drill, backup } = arrange(harness, 'Active');
    const run = await harness.run(drillPolicy(backup.backup_id, { afterwards: 'leave' }), 'drill');

    expect(run.summary.outcome).toBe('succeeded');
    expect(mutatingCalls(run)).toEqual(['restoreBackup']);
    expect(drill().status).toBe('Active');
    expect(run.summary.evidence).toMatchObject({ afterwards: { requested: 'leave', outcome: 'left' } });
  });

  it('a refused restore (a backup of another workspace) is tried once, fails the target and the workspace is paused anyway', async () => {
    const { drill, otherBackup } = arrange(harness, 'Stopped');
    const run = await harness.run(drillPolicy(otherBackup.backup_id), 'drill');

    expect(run.summary.outcome).toBe('failed');
    const [target] = run.summary.targets;
    expect(target?.attempts).toBe(1);
    expect(target?.error).toMatchObject({ status: 404, type: 'Not-Found', retryable: false });
    expect(target?.error?.message).toContain('backup_id');
    expect(mutatingCalls(run)).toEqual(['resumeWorkspace', 'restoreBackup', 'pauseWorkspace']);
    const refusedId = operations(run, 'restoreBackup')[0]?.requestId;
    expect(run.summary.evidence).toMatchObject({
      passed: false,
      resumeRequestIds: operations(run, 'resumeWorkspace').map((entry) => entry.requestId),
      restoreRequestIds: [refusedId],
      afterwards: { outcome: 'paused' },
    });
    expect(['Stopping', 'Stopped']).toContain(drill().status);
  });

  it('a transient restore error is retried and the drill then passes', async () => {
    const { sim, drill, backup } = arrange(harness, 'Active');
    // with this seed the first restore call draws an error and the second passes
    sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['restoreBackup'] });
    const run = await harness.run(
      drillPolicy(backup.backup_id, { expect: { vertices: backup.vertex_count } }),
      'drill',
    );

    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets[0]?.attempts).toBe(2);
    const restores = operations(run, 'restoreBackup');
    expect(restores.map((entry) => entry.status)).toEqual([500, 200]);
    expect(run.summary.evidence).toMatchObject({
      restoreRequestIds: restores.map((entry) => entry.requestId),
    });
    expect(mutatingCalls(run)).toEqual(['restoreBackup', 'restoreBackup', 'pauseWorkspace']);
    expect(drill().vertex_count).toBe(backup.vertex_count);
  });

  it('a transient failure of the pause afterwards retries the pause alone, not the restore', async () => {
    const { sim, drill, backup } = arrange(harness, 'Active');
    sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['pauseWorkspace'] });
    const run = await harness.run(drillPolicy(backup.backup_id), 'drill');

    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets[0]?.attempts).toBe(2);
    expect(mutatingCalls(run)).toEqual(['restoreBackup', 'pauseWorkspace', 'pauseWorkspace']);
    expect(run.summary.findings).toEqual([]);
    expect(run.summary.evidence).toMatchObject({ passed: true, afterwards: { outcome: 'paused' } });
    expect(['Stopping', 'Stopped']).toContain(drill().status);
  });

  it('when transient restore errors outlast the retries, the run still pauses the workspace once', async () => {
    const { sim, drill, backup } = arrange(harness, 'Stopped');
    sim.setFaults({ errorRate: 1, operations: ['restoreBackup'] });
    const run = await harness.run(drillPolicy(backup.backup_id, {}, '{ attempts: 2, backoff: 1s }'), 'drill');

    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.targets[0]).toMatchObject({ attempts: 2, error: { status: 500, retryable: true } });
    expect(mutatingCalls(run)).toEqual([
      'resumeWorkspace',
      'restoreBackup',
      'restoreBackup',
      'pauseWorkspace',
    ]);
    expect(run.summary.evidence).toMatchObject({ passed: false, afterwards: { outcome: 'paused' } });
    expect(['Stopping', 'Stopped']).toContain(drill().status);
  });

  it('a dry run calls read-only operations only and says it would resume first, restore and pause', async () => {
    const { backup } = arrange(harness, 'Stopped');
    const run = await harness.run(
      drillPolicy(backup.backup_id, { expect: { vertices: { min: 5 } } }),
      'drill',
      { dryRun: true },
    );

    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.targets).toEqual([
      expect.objectContaining({
        outcome: 'planned',
        reason: `would resume (Stopped), restore ${backup.backup_id}, check vertices at least 5, then pause it`,
      }),
    ]);
  });

  it('a dry run fails a workspace in a state the drill cannot start from, as the run would', async () => {
    const state = drillState('Active');
    const drill = workspacesIn(state, 'ops').find((ws) => ws.name === 'drill') as Drill;
    drill.status = 'Maintenance';
    harness.sim.reset({ state });
    const backup = harness.sim.state.backups.find((bk) => bk.workspace_id === drill.workspace_id);
    const policy = drillPolicy(backup?.backup_id ?? 'bk-none');

    for (const dryRun of [true, false]) {
      const run = await harness.run(policy, 'drill', { dryRun });
      expect(run.summary.outcome).toBe('failed');
      expect(run.summary.targets[0]?.error?.message).toBe(
        'ops/drill is Maintenance; the drill needs it Active or Stopped',
      );
    }
  });

  it.each([false, true])(
    'a workspace not in the fleet fails with a message naming it, changing nothing (dry run: %s)',
    async (dryRun) => {
      const { backup } = arrange(harness, 'Active');
      const run = await harness.run(drillPolicy(backup.backup_id, { workspace: 'no-such-drill' }), 'drill', {
        dryRun,
      });

      expect(run.summary.outcome).toBe('failed');
      expect(run.summary.targets[0]?.error?.message).toMatch(
        /^no workspace "no-such-drill" in workgroup "ops" \(known: drill, /,
      );
      expect(mutatingCalls(run)).toEqual([]);
    },
  );

  it('refuses a glob for the workspace: a restore overwrites the data of exactly the workspace named', () => {
    const text = drillPolicy('bk-1', { workspace: 'dr*' });
    expect(() => parsePolicy(text, 'test.yaml', { registry: actionRegistry, env: {} })).toThrow(
      /globs are refused/,
    );
  });
});

describe('restore-drill against a simulator whose restores take 600 ms', () => {
  const harness = useActionSim(() => drillState('Active'), { transitionMs: 600 });

  it('a hung restore fails with a failure, every call it sent (unanswered), and the first call as when the restore started', async () => {
    const { sim, backup } = arrange(harness, 'Active');
    sim.setFaults({ hangRate: 1, operations: ['restoreBackup'] });
    const run = await harness.run(
      drillPolicy(backup.backup_id, {}, '{ attempts: 2, backoff: 1s }'),
      'drill',
      {
        apiTimeoutMs: 500,
      },
    );

    expect(run.summary.outcome).toBe('failed');
    const evidence = run.summary.evidence ?? {};
    expect(evidence).toMatchObject({
      passed: false,
      failure: expect.stringMatching(/^not settled after 2 attempt\(s\): restoreBackup POST \S+ → Timeout/),
      restoreRequestIds: [],
      restoreCalls: [
        { execution: 1, outcome: 'unanswered', answeredAt: null, error: expect.stringMatching(/→ Timeout/) },
        { execution: 1, outcome: 'unanswered', answeredAt: null, error: expect.stringMatching(/→ Timeout/) },
      ],
      restoreAcceptedAt: null,
      timeToRestoreMs: null,
      afterwards: { outcome: 'paused' },
    });
    const calls = evidence.restoreCalls as { sentAt: string }[];
    expect(evidence.restoreStartedAt).toBe(calls[0]?.sentAt);
    expect(Date.parse(calls[1]?.sentAt ?? '')).toBeGreaterThan(Date.parse(String(evidence.restoreStartedAt)));
    expect(sim.state.workspaces.filter((ws) => ws.status === 'Restoring')).toEqual([]);
  });

  it('taken over after the restore was accepted and finished unwatched: no second restore, no time made up, the first delivery’s request ID kept', async () => {
    const { drill, backup } = arrange(harness, 'Active');
    const first = await firstExecutionAccepted(harness, backup.backup_id);
    // the restore finishes while no worker looks; the takeover comes a second later
    while (drill().status !== 'Active') await sleep(20);
    await sleep(1_000);
    const run = await harness.run(drillPolicy(backup.backup_id), 'drill', { checkpoints: first.checkpoints });

    expect(run.summary.outcome).toBe('succeeded');
    expect(mutatingCalls(run)).toEqual(['pauseWorkspace']);
    const evidence = run.summary.evidence ?? {};
    expect(evidence).toMatchObject({
      passed: true,
      executions: 2,
      takenOver: true,
      restoreAcceptedAt: new Date(first.acceptedAt).toISOString(),
      restoreAcceptedBy: 1,
      restoredBy: 2,
      timeToRestoreMs: null,
      restoreRequestIds: [first.requestId],
    });
    // all that is known: it was restored by the time the second execution looked
    expect(evidence.timeToRestoreAtMostMs).toBeGreaterThanOrEqual(1_000);
    expect(run.summary.targets[0]?.reason).toMatch(/time to restore unknown/);
    expect(run.summary.targets[0]?.requestIds).toContain(first.requestId);
  });

  it('finding the workspace already Restoring, waits for that restore instead of starting another', async () => {
    const { sim, drill, backup } = arrange(harness, 'Active');
    const api = new ApiClient({
      baseUrl: sim.url,
      apiKey: DEFAULT_API_KEY,
      bearerToken: DEFAULT_BEARER_TOKEN,
    });
    try {
      await api.restoreBackup(drill().workgroup_id, drill().workspace_id, backup.backup_id);
    } finally {
      await api.close();
    }
    expect(drill().status).toBe('Restoring');
    const run = await harness.run(
      drillPolicy(backup.backup_id, { expect: { edges: backup.edge_count } }),
      'drill',
    );

    expect(run.summary.outcome).toBe('succeeded');
    expect(mutatingCalls(run)).toEqual(['pauseWorkspace']);
    expect(run.summary.evidence).toMatchObject({
      restoreFoundUnderWay: true,
      restoreRequestIds: [],
      passed: true,
    });
    expect(drill().edge_count).toBe(backup.edge_count);
  });
});

describe('restore-drill against a simulator whose restores take 3 s', () => {
  const harness = useActionSim(() => drillState('Active'), { transitionMs: 3_000 });

  it('a restore that outlasts waitReady fails the drill and reports the workspace it could not pause', async () => {
    const { backup } = arrange(harness, 'Active');
    const run = await harness.run(drillPolicy(backup.backup_id, { waitReady: '1s' }), 'drill');

    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.targets[0]?.error?.message).toMatch(
      /ops\/drill not restored \(Active\) within 1s: still Restoring/,
    );
    expect(mutatingCalls(run)).toEqual(['restoreBackup']);
    expect(run.summary.findings).toEqual([
      expect.objectContaining({
        rule: 'restore-drill/left-running',
        severity: 'warning',
        subject: 'ops/drill',
      }),
    ]);
    expect(run.summary.evidence).toMatchObject({
      passed: false,
      afterwards: { requested: 'pause', outcome: 'not-paused', reason: 'workspace is Restoring' },
    });
  });

  it('taken over while the accepted restore still runs: the execution that waits measures from the first one’s accepted call', async () => {
    const { backup } = arrange(harness, 'Active');
    const first = await firstExecutionAccepted(harness, backup.backup_id);
    const run = await harness.run(drillPolicy(backup.backup_id), 'drill', { checkpoints: first.checkpoints });

    expect(run.summary.outcome).toBe('succeeded');
    expect(mutatingCalls(run)).toEqual(['pauseWorkspace']);
    const evidence = run.summary.evidence ?? {};
    expect(evidence).toMatchObject({ takenOver: true, restoreAcceptedBy: 1, restoredBy: 2 });
    // the simulator restores in 3 s; the second execution's poll every 50 ms saw it finish
    expect(evidence.timeToRestoreMs).toBeGreaterThanOrEqual(2_900);
    expect(evidence.timeToRestoreMs).toBeLessThan(4_000);
    expect(evidence.timeToRestoreMs).toBe(Date.parse(String(evidence.restoredAt)) - first.acceptedAt);
    expect(run.summary.targets[0]?.detail?.timeToRestoreMs).toBe(evidence.timeToRestoreMs);
  });

  it('a run that times out mid-restore still records its evidence and the workspace it left running', async () => {
    const { backup } = arrange(harness, 'Active');
    const run = await harness.run(
      drillPolicy(backup.backup_id).replace('    retry:', '    timeout: 1s\n    retry:'),
      'drill',
    );

    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.reason).toMatch(/timed out/);
    expect(run.summary.findings.map((finding) => finding.rule)).toEqual(['restore-drill/left-running']);
    expect(run.summary.evidence).toMatchObject({
      passed: false,
      backupId: backup.backup_id,
      afterwards: { outcome: 'not-paused', reason: 'workspace is Restoring' },
    });
  });
});
