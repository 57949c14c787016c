import { describe, expect, it } from 'vitest';
import { mutatingCalls, smallFleet, useActionSim, workgroupNamed } from '../../helpers/actions.js';

const policy = (workgroup: string, database: string, extra = '') => `version: 1
jobs:
  drop:
    schedule: "0 4 1 * *"
    action: delete-database
    confirm: true
    retry: { attempts: 3, backoff: 1s, strategy: fixed }
    with:
      workgroup: ${workgroup}
      database: ${database}
${extra}`;

describe('delete-database against the simulator', () => {
  const harness = useActionSim(smallFleet, { proxy: true });

  /** dev-alpha's empty archive database and the one its workspaces use. */
  const databases = () => {
    const { state } = harness.sim;
    const wg = workgroupNamed(state, 'dev-alpha');
    const own = state.databases.filter((d) => d.workgroup_id === wg.workgroup_id);
    const archive = own.find((d) => d.name === 'archive');
    const used = own.find((d) => state.workspaces.some((w) => w.database_id === d.database_id));
    if (!archive || !used) throw new Error('seed lacks the expected databases');
    return { wg, archive, used };
  };
  const exists = (databaseId: string) =>
    harness.sim.state.databases.some((d) => d.database_id === databaseId);
  const databasePath = (wg: string, db: string) => `/controller/v4/v2/workgroups/${wg}/databases/${db}`;

  it('deletes a database no workspace uses, named by workgroup and database name', async () => {
    const { wg, archive } = databases();
    const run = await harness.run(policy('dev-alpha', 'archive'), 'drop');
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets[0]).toMatchObject({
      key: `${wg.workgroup_id}/archive`,
      outcome: 'succeeded',
      detail: { databaseId: archive.database_id, databaseName: 'archive' },
    });
    expect(exists(archive.database_id)).toBe(false);
  });

  it('takes ids, and skips a database already absent from the listing as already deleted', async () => {
    const { wg, archive } = databases();
    await harness.run(policy(wg.workgroup_id, archive.database_id), 'drop');
    const again = await harness.run(policy(wg.workgroup_id, archive.database_id), 'drop');
    expect(again.summary.outcome).toBe('succeeded');
    expect(again.summary.targets[0]).toMatchObject({
      outcome: 'skipped',
      reason: `already deleted: no database "${archive.database_id}" in the listing`,
    });
    expect(mutatingCalls(again)).toEqual([]);
  });

  it('refuses a database that still has workspaces, listing them, without calling the API', async () => {
    const { used } = databases();
    const attached = harness.sim.state.workspaces.filter((w) => w.database_id === used.database_id);
    const run = await harness.run(policy('dev-alpha', used.name), 'drop');
    expect(run.summary.outcome).toBe('failed');
    const [target] = run.summary.targets;
    expect(target).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(target?.error?.message).toContain(
      `database "${used.name}" (${used.database_id}) still has ${attached.length} workspace(s) attached`,
    );
    for (const ws of attached) expect(target?.error?.message).toContain(`${ws.name} (${ws.workspace_id})`);
    expect(target?.error?.message).toContain('or set force: true to ask the API anyway');
    expect(mutatingCalls(run)).toEqual([]);
    expect(exists(used.database_id)).toBe(true);
  });

  it('with force: true asks the API, and reports its refusal (the simulator keeps databases with workspaces)', async () => {
    const { used } = databases();
    const run = await harness.run(policy('dev-alpha', used.name, '      force: true\n'), 'drop');
    expect(run.summary.outcome).toBe('failed');
    const [target] = run.summary.targets;
    expect(target).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { status: 400, type: 'Bad-Request' },
    });
    expect(target?.error?.message).toContain(
      "force: true only skips nightshift's own check; the API itself refused",
    );
    expect(target?.error?.requestId).toMatch(/.+/);
    expect(mutatingCalls(run)).toEqual(['deleteDatabase']);
    expect(exists(used.database_id)).toBe(true);
  });

  it('fails the run naming a workgroup that does not exist', async () => {
    const run = await harness.run(policy('no-such-group', 'archive'), 'drop');
    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.reason).toMatch(/^no workgroup "no-such-group" \(known: .*dev-alpha.*\)$/);
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('fails a permanent API error (Forbidden) after one attempt', async () => {
    const { wg, archive } = databases();
    harness.proxy.refuse({
      method: 'DELETE',
      path: databasePath(wg.workgroup_id, archive.database_id),
      status: 403,
      type: 'Forbidden',
    });
    const run = await harness.run(policy('dev-alpha', 'archive'), 'drop');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { status: 403, type: 'Forbidden' },
    });
    expect(exists(archive.database_id)).toBe(true);
  });

  it('retries a transient error until the delete goes through', async () => {
    const { archive } = databases();
    // seed 4 fails the first delete and passes the second
    harness.sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['deleteDatabase'] });
    const run = await harness.run(policy('dev-alpha', 'archive'), 'drop');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(exists(archive.database_id)).toBe(false);
  });

  it('a delete whose answer was lost is found gone on the retry and skipped as already deleted', async () => {
    const { wg, archive } = databases();
    harness.proxy.refuse({
      method: 'DELETE',
      path: databasePath(wg.workgroup_id, archive.database_id),
      status: 500,
      type: 'Internal-Error',
      forwardFirst: true,
      times: 1,
    });
    const run = await harness.run(policy('dev-alpha', 'archive'), 'drop');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'skipped',
      attempts: 2,
      reason: 'already deleted: no database "archive" in the listing',
    });
    expect(exists(archive.database_id)).toBe(false);
  });

  it('a dry run makes read-only calls only: plans an unused database, fails one in use as the run would', async () => {
    const { used } = databases();
    const plain = await harness.run(policy('dev-alpha', 'archive'), 'drop', { dryRun: true });
    expect(mutatingCalls(plain)).toEqual([]);
    expect(plain.summary.targets[0]).toMatchObject({ outcome: 'planned' });
    const inUse = await harness.run(policy('dev-alpha', used.name), 'drop', { dryRun: true });
    expect(inUse.summary.outcome).toBe('failed');
    expect(inUse.summary.targets[0]).toMatchObject({ outcome: 'failed', attempts: 1 });
    const attached = harness.sim.state.workspaces.filter((w) => w.database_id === used.database_id).length;
    expect(inUse.summary.targets[0]?.error?.message).toContain(
      `database "${used.name}" (${used.database_id}) still has ${attached} workspace(s) attached`,
    );
    const forced = await harness.run(policy('dev-alpha', used.name, '      force: true\n'), 'drop', {
      dryRun: true,
    });
    expect(forced.summary.targets[0]?.outcome).toBe('planned');
    expect(mutatingCalls(inUse)).toEqual([]);
    expect(mutatingCalls(forced)).toEqual([]);
    expect(exists(used.database_id)).toBe(true);
  });
});
