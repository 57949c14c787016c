import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SimState } from '../../../src/sim/index.js';
import {
  expectNoSecretLeak,
  mutatingCalls,
  smallFleet,
  useActionSim,
  workspacesIn,
} from '../../helpers/actions.js';
import {
  jsonLines,
  type Recorded,
  type SinkLine,
  sinkLines,
  useSinkFolder,
} from '../../helpers/secret-sink.js';

const USER = 'app';
const sinks = useSinkFolder('nightshift-rotate-');

/** A 2×2 fleet where every dev-alpha workspace has the user `app` at password version 1. */
function fleetWithUser(): SimState {
  const state = smallFleet();
  for (const ws of workspacesIn(state, 'dev-alpha')) {
    const model = state.dbUsers.find((u) => u.workspace_id === ws.workspace_id);
    if (!model) throw new Error(`seed has no db user in ${ws.workspace_id}`);
    state.dbUsers.push({ ...model, id: `dbu-app-${ws.workspace_id}`, username: USER, password_version: 1 });
  }
  return state;
}

const policy = (withBlock: string, target = '{ workgroups: ["dev-alpha"] }') => `version: 1
jobs:
  rotate:
    schedule: "0 3 1 * *"
    action: rotate-db-password
    target: ${target}
    retry: { attempts: 3, backoff: 1s, strategy: fixed }
    with:
${withBlock}`;

const fileSink = (path: string, extra = '') =>
  `      username: ${USER}\n      sink: { file: "${path}" }\n${extra}`;

describe('rotate-db-password against the simulator', () => {
  const harness = useActionSim(fleetWithUser, { proxy: true });

  const appUsers = () => harness.sim.state.dbUsers.filter((u) => u.username === USER);
  const version = (workspaceId: string) =>
    appUsers().find((u) => u.workspace_id === workspaceId)?.password_version;
  /** The proxy answers the next password update in `workspaceId` with `refusal`. */
  const refuseUpdate = (
    workspaceId: string,
    refusal: { status: number; type: string; forwardFirst?: boolean },
  ) => {
    const wg = harness.sim.state.workspaces.find((w) => w.workspace_id === workspaceId)?.workgroup_id ?? '';
    harness.proxy.refuse({
      method: 'PUT',
      path: `/controller/v4/v2/workgroups/${wg}/workspaces/${workspaceId}/dbuser`,
      times: 1,
      ...refusal,
    });
  };
  const onlyWorkspace = () => {
    const [first] = appUsers();
    if (!first) throw new Error('no app user');
    return {
      workspaceId: first.workspace_id,
      target: `{ workgroups: ["dev-alpha"], workspaces: ["${first.workspace_id}"] }`,
    };
  };

  it('sets a new password per workspace, delivered to a 0600 file before the call and marked current after', async () => {
    const path = sinks.fresh();
    const before = appUsers().map((u) => ({ ...u }));
    const run = await harness.run(policy(fileSink(path)), 'rotate');

    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.counts.succeeded).toBe(2);
    for (const user of before) {
      const after = appUsers().find((u) => u.id === user.id);
      expect(after?.password_version).toBe(user.password_version + 1);
      expect(after?.password_set_at).not.toBe(user.password_set_at);
    }

    expect(statSync(path).mode & 0o777).toBe(0o600);
    const lines = sinkLines(path);
    const pending = lines.filter((l) => l.state === 'pending');
    const current = lines.filter((l) => l.state === 'current');
    expect(pending).toHaveLength(2);
    expect(current.map((l) => l.secretId).sort()).toEqual(pending.map((l) => l.secretId).sort());
    for (const line of pending) {
      expect(line).toMatchObject({ job: 'rotate', runId: 'rotate@test', username: USER });
      expect(line.password).toMatch(/^[A-Za-z0-9]{32}$/);
      // the pending line comes first: it is written before the API call
      expect(lines.indexOf(line)).toBeLessThan(
        lines.findIndex((l) => l.state === 'current' && l.secretId === line.secretId),
      );
    }
    expect(current.every((l) => l.password === undefined)).toBe(true);
    const passwords = pending.map((l) => l.password ?? '');
    expect(new Set(passwords).size).toBe(2);
    expectNoSecretLeak(run, passwords);
    expect(run.summary.targets.map((t) => t.detail?.sink)).toEqual([path, path]);
  });

  it('honours length', async () => {
    const path = sinks.fresh();
    const run = await harness.run(policy(fileSink(path, '      length: 64\n')), 'rotate');
    expect(run.summary.outcome).toBe('succeeded');
    for (const line of sinkLines(path).filter((l) => l.state === 'pending'))
      expect(line.password).toHaveLength(64);
  });

  it("fails a user the workspace does not have after one attempt, closing its pending line as rejected with the API's error", async () => {
    const path = sinks.fresh();
    const { workspaceId, target } = onlyWorkspace();
    const run = await harness.run(
      policy(`      username: nobody\n      sink: { file: "${path}" }\n`, target),
      'rotate',
    );
    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { status: 404, type: 'Not-Found' },
    });
    expect(run.summary.targets[0]?.error?.message).toContain('user "nobody" does not exist');
    expect(version(workspaceId)).toBe(1);
    const lines = sinkLines(path);
    expect(lines.map((l) => l.state)).toEqual(['pending', 'rejected']);
    const [pending, rejected] = lines;
    expect(rejected).toMatchObject({ secretId: pending?.secretId, username: 'nobody' });
    expect(rejected?.password).toBeUndefined();
    expect(rejected?.error).toBe(run.summary.targets[0]?.error?.message);
    expect(rejected?.error).toMatch(/→ 404 Not-Found \(RequestID [^)]+\): .*user "nobody" does not exist/);
    expectNoSecretLeak(run, [pending?.password ?? '']);
  });

  it('closes the pending line as rejected when the API refuses the password (400), and no other', async () => {
    const path = sinks.fresh();
    const { workspaceId, target } = onlyWorkspace();
    refuseUpdate(workspaceId, { status: 400, type: 'Bad-Request' });
    const run = await harness.run(policy(fileSink(path), target), 'rotate');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'failed', attempts: 1, error: { status: 400 } });
    expect(version(workspaceId)).toBe(1);
    const lines = sinkLines(path);
    expect(lines.map((l) => [l.state, l.secretId])).toEqual([
      ['pending', lines[0]?.secretId],
      ['rejected', lines[0]?.secretId],
    ]);
    expect(lines[1]?.error).toContain('400 Bad-Request');
    expectNoSecretLeak(run, [lines[0]?.password ?? '']);
  });

  it('retries a transient error with a new password, and marks only the one that was set current', async () => {
    const path = sinks.fresh();
    const { workspaceId, target } = onlyWorkspace();
    // seed 4 fails the first update and passes the second
    harness.sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['updateDbUserPassword'] });
    const run = await harness.run(policy(fileSink(path), target), 'rotate');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(version(workspaceId)).toBe(2);
    const lines = sinkLines(path);
    expect(lines.map((l) => l.state)).toEqual(['pending', 'pending', 'current']);
    const [first, second, current] = lines;
    expect(first?.password).not.toBe(second?.password);
    expect(current?.secretId).toBe(second?.secretId);
    expectNoSecretLeak(run, [first?.password ?? '', second?.password ?? '']);
  });

  it('after a call that set the password but lost its answer, the retry sets and confirms another one', async () => {
    const path = sinks.fresh();
    const { workspaceId, target } = onlyWorkspace();
    refuseUpdate(workspaceId, { status: 500, type: 'Internal-Error', forwardFirst: true });
    const run = await harness.run(policy(fileSink(path), target), 'rotate');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    // both calls reached the simulator: the password in effect is the second, the one marked current
    expect(version(workspaceId)).toBe(3);
    const [, second, current] = sinkLines(path);
    expect(current).toMatchObject({ state: 'current', secretId: second?.secretId });
  });

  it('refuses a sink file that group or others can read, before any API call', async () => {
    const path = sinks.fresh();
    writeFileSync(path, '', { mode: 0o600 });
    chmodSync(path, 0o644);
    const run = await harness.run(policy(fileSink(path)), 'rotate');
    expect(run.summary.outcome).toBe('failed');
    for (const target of run.summary.targets) {
      expect(target).toMatchObject({ outcome: 'failed', attempts: 1 });
      expect(target.error?.message).toContain(`secret sink ${path}: refused: the file has mode 0644`);
    }
    expect(run.requests.map((r) => r.operation)).not.toContain('updateDbUserPassword');
    expect(appUsers().map((u) => u.password_version)).toEqual([1, 1]);
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('names the sink file it refused by its path, when the policy has it from a variable (no secret)', async () => {
    const path = sinks.fresh();
    writeFileSync(path, '', { mode: 0o600 });
    chmodSync(path, 0o644);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
    const reference = '${SINK_PATH:-/var/lib/nightshift/passwords.jsonl}';
    const run = await harness.run(policy(fileSink(reference)), 'rotate', { env: { SINK_PATH: path } });
    expect(run.summary.outcome).toBe('failed');
    for (const target of run.summary.targets)
      expect(target.error?.message).toBe(
        `secret sink ${path}: refused: the file has mode 0644, so group or others may read it; make it private (chmod 600 ${path}) or use a new file`,
      );
  });

  it('delivers to a command: the record on stdin, the identity in NIGHTSHIFT_SECRET_* variables', async () => {
    const { command, out } = sinks.recorder();
    const { workspaceId, target } = onlyWorkspace();
    const sink = `      username: ${USER}\n      sink: { command: ${JSON.stringify(command)} }\n`;
    const run = await harness.run(policy(sink, target), 'rotate');
    expect(run.summary.outcome).toBe('succeeded');
    expect(version(workspaceId)).toBe(2);
    const recorded = jsonLines<Recorded>(out).map(({ stdin, env }) => ({
      line: JSON.parse(stdin) as SinkLine,
      env,
    }));
    expect(
      recorded.map(({ line, env }) => [
        line.state,
        env.NIGHTSHIFT_SECRET_STATE,
        env.NIGHTSHIFT_SECRET_USERNAME,
      ]),
    ).toEqual([
      ['pending', 'pending', USER],
      ['current', 'current', USER],
    ]);
    const password = recorded[0]?.line.password ?? '';
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    expectNoSecretLeak(run, [password]);
    expect(run.summary.targets[0]?.detail?.sink).toBe(process.execPath);
  });

  it('a sink command that exits non-zero aborts the rotation before the API call', async () => {
    const { workspaceId, target } = onlyWorkspace();
    const sink = `      username: ${USER}\n      sink: { command: ["${process.execPath}", "-e", "process.exit(3)"] }\n`;
    const run = await harness.run(policy(sink, target), 'rotate');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(run.summary.targets[0]?.error?.message).toBe(
      `secret sink command ${process.execPath}: exited with code 3`,
    );
    expect(run.requests.map((r) => r.operation)).not.toContain('updateDbUserPassword');
    expect(version(workspaceId)).toBe(1);
  });

  it('a dry run makes read-only calls only, plans each workspace and writes no sink', async () => {
    const path = sinks.fresh();
    const run = await harness.run(policy(fileSink(path)), 'rotate', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.counts).toMatchObject({ planned: 2, total: 2 });
    expect(run.summary.targets[0]?.reason).toBe(
      `would set a new 32-character password for "app" and deliver it to ${path}`,
    );
    expect(existsSync(path)).toBe(false);
  });

  it('a dry run reports a sink file that would be refused', async () => {
    const path = sinks.fresh();
    writeFileSync(path, '', { mode: 0o600 });
    chmodSync(path, 0o604);
    const run = await harness.run(policy(fileSink(path)), 'rotate', { dryRun: true });
    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.reason).toContain('mode 0604');
    expect(mutatingCalls(run)).toEqual([]);
  });
});
