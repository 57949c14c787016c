import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SimState, type SimulatorHandle, seedState, startSimulator } from '../../../src/sim/index.js';
import { type ActionRun, mutatingCalls, runJob } from '../../helpers/actions.js';
import { type RefusingProxy, startRefusingProxy } from './allow-list-fixtures.js';

const USER = 'app';
const dir = mkdtempSync(join(tmpdir(), 'nightshift-rotate-'));
let files = 0;
const freshSink = () => join(dir, `secrets-${++files}.jsonl`);

/** A 2×2 fleet where every dev-alpha workspace has the user `app` at password version 1. */
function fleetWithUser(): SimState {
  const state = seedState({ seed: 5, fleet: { workgroups: 2, workspacesPerWorkgroup: 2 } });
  const wg = state.workgroups.find((w) => w.name === 'dev-alpha');
  for (const ws of state.workspaces.filter((w) => w.workgroup_id === wg?.workgroup_id)) {
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

interface SinkLine {
  time: string;
  job: string;
  runId: string;
  workgroupId: string;
  workspaceId: string;
  username: string;
  secretId: string;
  state: 'pending' | 'current';
  password?: string;
}

const sinkLines = (path: string): SinkLine[] =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as SinkLine);

const appUsers = (sim: SimulatorHandle) => sim.state.dbUsers.filter((u) => u.username === USER);
const version = (sim: SimulatorHandle, workspaceId: string) =>
  appUsers(sim).find((u) => u.workspace_id === workspaceId)?.password_version;

/** The run's log lines, summary and sink text do not leak, except the sink's pending lines. */
function expectNowhereButSink(run: ActionRun, passwords: readonly string[]) {
  const logged = JSON.stringify(run.lines);
  const summary = JSON.stringify(run.summary);
  for (const password of passwords) {
    expect(logged).not.toContain(password);
    expect(summary).not.toContain(password);
  }
}

describe('rotate-db-password against the simulator', () => {
  let sim: SimulatorHandle;
  let proxy: RefusingProxy;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, transitionMs: 50, state: fleetWithUser() });
    proxy = await startRefusingProxy(sim);
  });
  afterAll(async () => {
    await proxy.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    sim.reset({ state: fleetWithUser() });
    proxy.reset();
  });

  const onlyWorkspace = () => {
    const [first] = appUsers(sim);
    if (!first) throw new Error('no app user');
    return {
      workspaceId: first.workspace_id,
      target: `{ workgroups: ["dev-alpha"], workspaces: ["${first.workspace_id}"] }`,
    };
  };

  it('sets a new password per workspace, delivered to a 0600 file before the call and marked current after', async () => {
    const path = freshSink();
    const before = appUsers(sim).map((u) => ({ ...u }));
    const run = await runJob(sim, policy(fileSink(path)), 'rotate');

    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.counts.succeeded).toBe(2);
    for (const user of before) {
      const after = appUsers(sim).find((u) => u.id === user.id);
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
    expectNowhereButSink(run, passwords);
    expect(run.summary.targets.map((t) => t.detail?.sink)).toEqual([path, path]);
  });

  it('honours length', async () => {
    const path = freshSink();
    const run = await runJob(sim, policy(fileSink(path, '      length: 64\n')), 'rotate');
    expect(run.summary.outcome).toBe('succeeded');
    for (const line of sinkLines(path).filter((l) => l.state === 'pending'))
      expect(line.password).toHaveLength(64);
  });

  it('fails a user the workspace does not have after one attempt, leaving its pending line unconfirmed', async () => {
    const path = freshSink();
    const { workspaceId, target } = onlyWorkspace();
    const run = await runJob(
      sim,
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
    expect(version(sim, workspaceId)).toBe(1);
    const lines = sinkLines(path);
    expect(lines.map((l) => l.state)).toEqual(['pending']);
    expectNowhereButSink(run, [lines[0]?.password ?? '']);
  });

  it('retries a transient error with a new password, and marks only the one that was set current', async () => {
    const path = freshSink();
    const { workspaceId, target } = onlyWorkspace();
    // seed 4 fails the first update and passes the second
    sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['updateDbUserPassword'] });
    const run = await runJob(sim, policy(fileSink(path), target), 'rotate');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(version(sim, workspaceId)).toBe(2);
    const lines = sinkLines(path);
    expect(lines.map((l) => l.state)).toEqual(['pending', 'pending', 'current']);
    const [first, second, current] = lines;
    expect(first?.password).not.toBe(second?.password);
    expect(current?.secretId).toBe(second?.secretId);
    expectNowhereButSink(run, [first?.password ?? '', second?.password ?? '']);
  });

  it('after a call that set the password but lost its answer, the retry sets and confirms another one', async () => {
    const path = freshSink();
    const { workspaceId, target } = onlyWorkspace();
    const wg = sim.state.workspaces.find((w) => w.workspace_id === workspaceId)?.workgroup_id ?? '';
    proxy.refuse({
      method: 'PUT',
      path: `/controller/v4/v2/workgroups/${wg}/workspaces/${workspaceId}/dbuser`,
      status: 500,
      type: 'Internal-Error',
      forwardFirst: true,
      times: 1,
    });
    const run = await runJob(proxy.sim, policy(fileSink(path), target), 'rotate');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    // both calls reached the simulator: the password in effect is the second, the one marked current
    expect(version(sim, workspaceId)).toBe(3);
    const [, second, current] = sinkLines(path);
    expect(current).toMatchObject({ state: 'current', secretId: second?.secretId });
  });

  it('refuses a sink file that group or others can read, before any API call', async () => {
    const path = freshSink();
    writeFileSync(path, '', { mode: 0o600 });
    chmodSync(path, 0o644);
    const run = await runJob(sim, policy(fileSink(path)), 'rotate');
    expect(run.summary.outcome).toBe('failed');
    for (const target of run.summary.targets) {
      expect(target).toMatchObject({ outcome: 'failed', attempts: 1 });
      expect(target.error?.message).toContain(`secret sink ${path}: refused: the file has mode 0644`);
    }
    expect(run.requests.map((r) => r.operation)).not.toContain('updateDbUserPassword');
    expect(appUsers(sim).map((u) => u.password_version)).toEqual([1, 1]);
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('delivers to a command: the record on stdin, the identity in NIGHTSHIFT_SECRET_* variables', async () => {
    const script = join(dir, 'store-secret.mjs');
    const out = join(dir, `stored-${++files}.jsonl`);
    writeFileSync(
      script,
      `import { appendFileSync } from 'node:fs';
const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const record = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  appendFileSync(process.argv[2], JSON.stringify({ ...record, envState: process.env.NIGHTSHIFT_SECRET_STATE, envUser: process.env.NIGHTSHIFT_SECRET_USERNAME }) + '\\n');
});
`,
    );
    const { workspaceId, target } = onlyWorkspace();
    const sink = `      username: ${USER}\n      sink: { command: ["${process.execPath}", "${script}", "${out}"] }\n`;
    const run = await runJob(sim, policy(sink, target), 'rotate');
    expect(run.summary.outcome).toBe('succeeded');
    expect(version(sim, workspaceId)).toBe(2);
    const lines = sinkLines(out) as Array<SinkLine & { envState: string; envUser: string }>;
    expect(lines.map((l) => [l.state, l.envState, l.envUser])).toEqual([
      ['pending', 'pending', USER],
      ['current', 'current', USER],
    ]);
    expect(lines[0]?.password).toMatch(/^[A-Za-z0-9]{32}$/);
    expectNowhereButSink(run, [lines[0]?.password ?? '']);
    expect(run.summary.targets[0]?.detail?.sink).toBe(process.execPath);
  });

  it('a sink command that exits non-zero aborts the rotation before the API call', async () => {
    const { workspaceId, target } = onlyWorkspace();
    const sink = `      username: ${USER}\n      sink: { command: ["${process.execPath}", "-e", "process.exit(3)"] }\n`;
    const run = await runJob(sim, policy(sink, target), 'rotate');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(run.summary.targets[0]?.error?.message).toBe(
      `secret sink command ${process.execPath}: exited with code 3`,
    );
    expect(run.requests.map((r) => r.operation)).not.toContain('updateDbUserPassword');
    expect(version(sim, workspaceId)).toBe(1);
  });

  it('a dry run makes read-only calls only, plans each workspace and writes no sink', async () => {
    const path = freshSink();
    const run = await runJob(sim, policy(fileSink(path)), 'rotate', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.counts).toMatchObject({ planned: 2, total: 2 });
    expect(run.summary.targets[0]?.reason).toBe(
      `would set a new 32-character password for "app" and deliver it to ${path}`,
    );
    expect(existsSync(path)).toBe(false);
  });

  it('a dry run reports a sink file that would be refused', async () => {
    const path = freshSink();
    writeFileSync(path, '', { mode: 0o600 });
    chmodSync(path, 0o604);
    const run = await runJob(sim, policy(fileSink(path)), 'rotate', { dryRun: true });
    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.reason).toContain('mode 0604');
    expect(mutatingCalls(run)).toEqual([]);
  });
});
