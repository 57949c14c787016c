import { hostname, userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import type { AuditEntry } from '../../../src/store/index.js';
import { assertBuilt, type Engine, startCli, useEngineHarness } from '../../helpers/engine.js';

/** The audit trail as operators write and read it: each change from the CLI, then `nightshift audit`. */

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 3 });

const POLICY = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

beforeAll(() => assertBuilt());
afterAll(() => harness.sim.reset());

async function cli(engine: Engine, ...args: string[]) {
  const child = startCli(args, {
    REDIS_URL: harness.server.url,
    NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
    NIGHTSHIFT_API_URL: harness.sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_LOG_LEVEL: 'silent',
  });
  const code = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

async function inForce(engine: Engine): Promise<void> {
  await engine.policies.setCurrent(await engine.policies.put(POLICY), { host: 'test' });
}

describe('the audit trail from the command line', () => {
  it('hold, release, suspend, unsuspend and cancel are each recorded with who, from where and why; audit lists them newest first', async () => {
    const engine = harness.engine('audit-cli');
    await inForce(engine);
    const steps = [
      ['hold', '*/*', '--state', 'active', '--for', '2h', '--reason', 'customer demo', '--by', 'ana'],
      ['release', '*/*', '--by', 'bo'],
      ['suspend', 'nightly-pause', '--for', '2h', '--reason', 'release freeze', '--by', 'cy'],
      ['unsuspend', 'nightly-pause', '--reason', 'freeze over', '--by', 'cy'],
    ];
    for (const step of steps) {
      const done = await cli(engine, ...step);
      expect(done.code, `${step.join(' ')}: ${done.stderr}`).toBe(0);
    }
    const runId = await engine.enqueue(POLICY, 'nightly-pause');
    expect((await cli(engine, 'cancel', runId, '--reason', 'wrong day', '--by', 'di')).code).toBe(0);
    // asked again: the cancel stands, and nothing new is recorded
    expect((await cli(engine, 'cancel', runId, '--by', 'ed')).code).toBe(0);

    const listed = await cli(engine, 'audit', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const entries = JSON.parse(listed.stdout) as AuditEntry[];
    expect(entries.map((entry) => [entry.action, entry.subject, entry.who, entry.why])).toEqual([
      ['cancel', runId, 'di', 'wrong day'],
      ['unsuspend', 'nightly-pause', 'cy', 'freeze over'],
      ['suspend', 'nightly-pause', 'cy', 'release freeze'],
      ['release', '*/*', 'bo', undefined],
      ['hold', '*/*', 'ana', 'customer demo'],
    ]);
    const where = `cli ${userInfo().username}@${hostname()}`;
    expect(new Set(entries.map((entry) => entry.where))).toEqual(new Set([where]));
    expect(entries[2]?.details?.until).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(entries[4]?.details).toMatchObject({ state: 'active' });
    expect(entries[0]?.details).toEqual({ job: 'nightly-pause' });

    const table = await cli(engine, 'audit', '--since', '1h', '--limit', '2');
    expect(table.stdout).toMatch(/^AT +WHO +ACTION +SUBJECT +WHERE +WHY +DETAILS\n\S+ +di +cancel +/);
    expect(table.stdout.trim().split('\n')).toHaveLength(3);
    expect((await cli(engine, 'audit', '--since', '2099-01-01T00:00:00Z')).stdout).toBe(
      'no changes recorded\n',
    );
    expect((await cli(engine, 'audit', '--since', 'yesterday')).code).toBe(2);
  }, 60_000);

  it('a suspension with --for ends by itself: suspend --json says until when, and the job is not suspended after', async () => {
    const engine = harness.engine('audit-suspend-for');
    await inForce(engine);
    const done = await cli(engine, 'suspend', 'nightly-pause', '--for', '2h', '--json');
    expect(done.code, done.stderr).toBe(0);
    const result = JSON.parse(done.stdout) as { suspended: boolean; changed: boolean; until: string };
    expect(result).toMatchObject({ suspended: true, changed: true });
    expect(Date.parse(result.until) - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect((await engine.suspensions.get('nightly-pause'))?.until).toBe(result.until);
    const both = await cli(
      engine,
      'suspend',
      'nightly-pause',
      '--for',
      '2h',
      '--until',
      '2099-01-01T00:00:00Z',
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give one of --for <duration> and --until <instant>, not both');
    const past = await cli(engine, 'suspend', 'nightly-pause', '--until', '2020-01-01T00:00:00Z');
    expect(past.code).toBe(2);
    expect(past.stderr).toContain('is in the past');
  }, 60_000);

  it('hold --dry-run lists what the pattern matches from a fresh listing, and places nothing nor records anything', async () => {
    const engine = harness.engine('audit-hold-dry');
    const preview = await cli(engine, 'hold', '*/*', '--state', 'active', '--dry-run', '--json');
    expect(preview.code, preview.stderr).toBe(0);
    const report = JSON.parse(preview.stdout) as { matches: { workspace: string }[]; listing: string };
    expect(report.matches).toHaveLength(3);
    expect(report.listing).toContain('the API');
    const table = await cli(engine, 'hold', '*/*', '--state', 'active', '--dry-run');
    expect(table.stdout).toMatch(
      /"\*\/\*" matches 3 workspace\(s\) .*dry run: no hold placed\nWORKSPACE +STATUS\n/,
    );
    expect(await engine.state.holds.active(new Date())).toEqual([]);
    expect((await cli(engine, 'audit', '--json')).stdout.trim()).toBe('[]');
    const none = await cli(engine, 'hold', 'nothing-*/*', '--state', 'active', '--dry-run');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('matches no workspace of the fleet');
  }, 60_000);
});
