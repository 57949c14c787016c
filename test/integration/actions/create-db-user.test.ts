import { existsSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { parsePolicy } from '../../../src/policy/index.js';
import {
  expectNoSecretLeak,
  mutatingCalls,
  smallFleet,
  useActionSim,
  workspacesIn,
} from '../../helpers/actions.js';
import { sinkLines, useSinkFolder } from '../../helpers/secret-sink.js';

const PASSWORD = 'Reporting-Pass-7731';
const env = { REPORTING_DB_PASSWORD: PASSWORD };
const sinks = useSinkFolder('nightshift-create-user-');

const policy = (withBlock: string, target = '{ workgroups: ["dev-alpha"] }') => `version: 1
jobs:
  user:
    schedule: "0 6 * * 1"
    action: create-db-user
    target: ${target}
    retry: { attempts: 3, backoff: 1s, strategy: fixed }
    with:
${withBlock}`;

const fromEnv = (username = 'reporting') =>
  `      username: ${username}\n      password: "\${REPORTING_DB_PASSWORD}"\n`;
const generated = (path: string, username = 'reporting') =>
  `      username: ${username}\n      sink: { file: "${path}" }\n`;

describe('create-db-user against the simulator', () => {
  const harness = useActionSim(smallFleet, { proxy: true });

  const devAlpha = () => workspacesIn(harness.sim.state, 'dev-alpha');
  const usersNamed = (username: string) => harness.sim.state.dbUsers.filter((u) => u.username === username);
  const oneWorkspace = () => {
    const [ws] = devAlpha();
    if (!ws) throw new Error('no workspace');
    return { ws, target: `{ workgroups: ["dev-alpha"], workspaces: ["${ws.workspace_id}"] }` };
  };

  it('creates the user with the password from the environment in every workspace, and never logs it', async () => {
    const run = await harness.run(policy(fromEnv()), 'user', { env });
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.counts.succeeded).toBe(2);
    expect(
      usersNamed('reporting')
        .map((u) => u.workspace_id)
        .sort(),
    ).toEqual(
      devAlpha()
        .map((w) => w.workspace_id)
        .sort(),
    );
    for (const target of run.summary.targets) expect(target.detail).toMatchObject({ role: 'reader' });
    expectNoSecretLeak(run, [PASSWORD]);
  });

  it('delivers a generated password to a 0600 sink file before creating the user, and marks it current after', async () => {
    const path = sinks.fresh();
    const run = await harness.run(policy(generated(path)), 'user');
    expect(run.summary.outcome).toBe('succeeded');
    expect(usersNamed('reporting')).toHaveLength(2);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const lines = sinkLines(path);
    const pending = lines.filter((l) => l.state === 'pending');
    expect(pending).toHaveLength(2);
    expect(
      lines
        .filter((l) => l.state === 'current')
        .map((l) => l.secretId)
        .sort(),
    ).toEqual(pending.map((l) => l.secretId).sort());
    for (const line of pending) expect(line.password).toMatch(/^[A-Za-z0-9]{32}$/);
    expectNoSecretLeak(
      run,
      pending.map((l) => l.password ?? ''),
    );
  });

  it('skips a workspace that already has the user and leaves that user as it was', async () => {
    const existing = harness.sim.state.dbUsers.find((u) =>
      devAlpha().some((w) => w.workspace_id === u.workspace_id),
    );
    if (!existing) throw new Error('seed has no db user in dev-alpha');
    const before = { ...existing };
    const run = await harness.run(policy(fromEnv(existing.username)), 'user', { env });
    const target = run.summary.targets.find((t) => t.workspaceId === existing.workspace_id);
    expect(target).toMatchObject({
      outcome: 'skipped',
      reason: 'already exists (left as it is)',
      attempts: 1,
    });
    const after = harness.sim.state.dbUsers.find((u) => u.id === existing.id);
    expect(after?.password_version).toBe(before.password_version);
    expect(after?.password_set_at).toBe(before.password_set_at);
  });

  it("closes a generated password's pending line as rejected when the user already exists: it was never set", async () => {
    const path = sinks.fresh();
    const existing = harness.sim.state.dbUsers.find((u) =>
      devAlpha().some((w) => w.workspace_id === u.workspace_id),
    );
    if (!existing) throw new Error('seed has no db user in dev-alpha');
    const target = `{ workgroups: ["dev-alpha"], workspaces: ["${existing.workspace_id}"] }`;
    const run = await harness.run(policy(generated(path, existing.username), target), 'user');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'skipped', attempts: 1 });
    const lines = sinkLines(path);
    expect(lines.map((l) => l.state)).toEqual(['pending', 'rejected']);
    expect(lines[1]).toMatchObject({ secretId: lines[0]?.secretId, username: existing.username });
    expect(lines[1]?.error).toMatch(/→ 400 /);
    expect(lines[1]?.password).toBeUndefined();
  });

  it('a second run skips every workspace: creating is idempotent', async () => {
    await harness.run(policy(fromEnv()), 'user', { env });
    const again = await harness.run(policy(fromEnv()), 'user', { env });
    expect(again.summary.outcome).toBe('succeeded');
    expect(again.summary.counts).toMatchObject({ skipped: 2, succeeded: 0 });
    expect(usersNamed('reporting').map((u) => u.password_version)).toEqual([1, 1]);
  });

  it('fails a password the API refuses after one attempt, without echoing it', async () => {
    const { target } = oneWorkspace();
    const run = await harness.run(policy(fromEnv(), target), 'user', {
      env: { REPORTING_DB_PASSWORD: 'short' },
    });
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { status: 400, type: 'Bad-Request' },
    });
    expect(usersNamed('reporting')).toEqual([]);
    expect(JSON.stringify(run.summary.targets[0]?.error)).not.toContain('"short"');
  });

  it('retries a transient error with the same password, delivered once', async () => {
    const path = sinks.fresh();
    const { target } = oneWorkspace();
    // seed 4 fails the first create and passes the second
    harness.sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['createDbUser'] });
    const run = await harness.run(policy(generated(path), target), 'user');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(sinkLines(path).map((l) => l.state)).toEqual(['pending', 'current']);
    expect(usersNamed('reporting')).toHaveLength(1);
  });

  it('when the create went through but its answer was lost, the retry skips it and says the pending password may hold', async () => {
    const path = sinks.fresh();
    const { ws, target } = oneWorkspace();
    harness.proxy.refuse({
      method: 'POST',
      path: `/controller/v4/v2/workgroups/${ws.workgroup_id}/workspaces/${ws.workspace_id}/dbuser`,
      status: 500,
      type: 'Internal-Error',
      forwardFirst: true,
      times: 1,
    });
    const run = await harness.run(policy(generated(path), target), 'user');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'skipped',
      attempts: 2,
      reason:
        'already exists: maybe made by an earlier attempt whose answer was lost, with the password sent then',
    });
    expect(usersNamed('reporting')).toHaveLength(1);
    // one password was generated and sent both times; it stays pending, for an operator to settle
    expect(sinkLines(path).map((l) => l.state)).toEqual(['pending']);
  });

  it('a dry run makes read-only calls only and plans each workspace', async () => {
    const path = sinks.fresh();
    const run = await harness.run(policy(generated(path)), 'user', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.counts).toMatchObject({ planned: 2, total: 2 });
    expect(run.summary.targets[0]?.reason).toContain(`delivering its generated password to ${path}`);
    expect(existsSync(path)).toBe(false);
    expect(usersNamed('reporting')).toEqual([]);
  });

  it('a policy with neither a password nor a sink is refused', () => {
    const text = policy('      username: reporting\n');
    expect(() => parsePolicy(text, 'p.yaml', { registry: actionRegistry, env: {} })).toThrow(
      'give a password, or a sink to deliver the generated one to',
    );
  });
});
