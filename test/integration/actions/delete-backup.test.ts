import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { parsePolicy } from '../../../src/policy/index.js';
import {
  mutatingCalls,
  smallFleet,
  useActionSim,
  workgroupNamed,
  workspacesIn,
} from '../../helpers/actions.js';

const policy = (workgroup: string, workspace: string, backupIds: readonly string[]) => `version: 1
jobs:
  drop:
    schedule: "0 2 * * 0"
    action: delete-backup
    confirm: true
    retry: { attempts: 3, backoff: 1s, strategy: fixed }
    with:
      workgroup: ${workgroup}
      workspace: ${workspace}
      backupIds: [${backupIds.join(', ')}]
`;

describe('delete-backup against the simulator', () => {
  const harness = useActionSim(smallFleet, { proxy: true });

  /** The first dev-alpha workspace, with its names and its two seeded backups. */
  const subject = () => {
    const wg = workgroupNamed(harness.sim.state, 'dev-alpha');
    const [ws] = workspacesIn(harness.sim.state, 'dev-alpha');
    if (!ws) throw new Error('no dev-alpha workspace');
    const backups = harness.sim.state.backups
      .filter((b) => b.workspace_id === ws.workspace_id)
      .map((b) => b.backup_id);
    expect(backups).toHaveLength(2);
    return { wg, ws, backups };
  };
  const exists = (backupId: string) => harness.sim.state.backups.some((b) => b.backup_id === backupId);
  const backupsPath = (wg: string, ws: string) =>
    `/controller/v4/v2/workgroups/${wg}/workspaces/${ws}/backups`;

  it('deletes the listed backups of a workspace named by workgroup and workspace name', async () => {
    const { ws, backups } = subject();
    const run = await harness.run(policy('dev-alpha', ws.name, backups), 'drop');
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets.map((t) => [t.key, t.outcome])).toEqual(
      backups.map((id) => [`${ws.workgroup_id}/${ws.workspace_id}/${id}`, 'succeeded']).sort(),
    );
    expect(backups.filter(exists)).toEqual([]);
    expect(mutatingCalls(run)).toEqual(['deleteBackup', 'deleteBackup']);
  });

  it('takes ids as well as names, and deletes a backup listed twice once', async () => {
    const { wg, ws, backups } = subject();
    const [first] = backups as [string];
    const run = await harness.run(policy(wg.workgroup_id, ws.workspace_id, [first, first]), 'drop');
    expect(run.summary.counts).toMatchObject({ total: 1, succeeded: 1 });
    expect(exists(first)).toBe(false);
  });

  it('skips a backup that is already gone: Not-Found on delete is how it knows', async () => {
    const { ws, backups } = subject();
    await harness.run(policy('dev-alpha', ws.name, backups), 'drop');
    const again = await harness.run(policy('dev-alpha', ws.name, backups), 'drop');
    expect(again.summary.outcome).toBe('succeeded');
    for (const target of again.summary.targets) {
      expect(target).toMatchObject({
        outcome: 'skipped',
        reason: 'already deleted (the API answers Not-Found)',
        attempts: 1,
      });
    }
  });

  it('fails the run naming a workspace the workgroup does not have, deleting nothing', async () => {
    const { backups } = subject();
    const run = await harness.run(policy('dev-alpha', 'no-such-workspace', backups), 'drop');
    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.reason).toMatch(
      /^no workspace "no-such-workspace" in workgroup "dev-alpha" \(known: .+\)$/,
    );
    expect(mutatingCalls(run)).toEqual([]);
    expect(backups.every(exists)).toBe(true);
  });

  it('fails a backup the API refuses (Forbidden) after one attempt and keeps going with the others', async () => {
    const { ws, backups } = subject();
    harness.proxy.refuse({
      method: 'DELETE',
      path: backupsPath(ws.workgroup_id, ws.workspace_id),
      status: 403,
      type: 'Forbidden',
      times: 1,
    });
    const run = await harness.run(policy('dev-alpha', ws.name, backups), 'drop');
    expect(run.summary.outcome).toBe('partial');
    const failed = run.summary.targets.filter((t) => t.outcome === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ attempts: 1, error: { status: 403, type: 'Forbidden' } });
    expect(backups.filter(exists)).toHaveLength(1);
  });

  it('retries a transient error until the delete goes through', async () => {
    const { ws, backups } = subject();
    const [first] = backups as [string];
    // seed 4 fails the first delete and passes the second
    harness.sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['deleteBackup'] });
    const run = await harness.run(policy('dev-alpha', ws.name, [first]), 'drop');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(exists(first)).toBe(false);
  });

  it('a delete whose answer was lost is skipped as already deleted on the retry', async () => {
    const { ws, backups } = subject();
    const [first] = backups as [string];
    harness.proxy.refuse({
      method: 'DELETE',
      path: backupsPath(ws.workgroup_id, ws.workspace_id),
      status: 500,
      type: 'Internal-Error',
      forwardFirst: true,
      times: 1,
    });
    const run = await harness.run(policy('dev-alpha', ws.name, [first]), 'drop');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'skipped',
      attempts: 2,
      reason: 'already deleted (the API answers Not-Found)',
    });
    expect(exists(first)).toBe(false);
  });

  it('a dry run makes read-only calls only and plans each backup', async () => {
    const { ws, backups } = subject();
    const run = await harness.run(policy('dev-alpha', ws.name, backups), 'drop', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.counts).toMatchObject({ planned: 2, total: 2 });
    expect(backups.every(exists)).toBe(true);
  });

  it('is destructive: a job without confirm: true is refused', () => {
    const text = policy('dev-alpha', 'x', ['bk-1']).replace('    confirm: true\n', '');
    expect(() => parsePolicy(text, 'p.yaml', { registry: actionRegistry, env: {} })).toThrow(/confirm/);
  });
});
