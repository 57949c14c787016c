import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriftRow } from '../../../src/cli/fleet-report.js';
import type { Hold, RunSummary } from '../../../src/engine/index.js';
import type { SavingsReport } from '../../../src/engine/savings.js';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { workspaceStatusFields } from '../../../src/sim/status.js';
import { systemClock } from '../../../src/time/index.js';
import { assertBuilt, type Engine, startCli, useEngineHarness } from '../../helpers/engine.js';

/**
 * The commands of windows, run as a user runs them: drift, plan, hold, holds, release and
 * savings, against a private Redis and the simulator.
 */

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 3 });

/**
 * Uptime is the hour (UTC) that holds `inside`, by default three hours from now: now is outside
 * it, whenever the test runs.
 */
function offHoursPolicy(inside = Date.now() + 3 * 3_600_000): string {
  const start = new Date(inside);
  const hh = String(start.getUTCHours()).padStart(2, '0');
  const end = String((start.getUTCHours() + 1) % 24).padStart(2, '0');
  return `version: 1
pricing: { currency: EUR, default: 0.5 }
windows:
  office:
    target: { workgroups: ["*"] }
    uptime: "Mon-Sun ${hh}:00-${end === '00' ? '24' : end}:00"
    timezone: UTC
`;
}

let dir: string;
let file: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-windows-cli-'));
  file = join(dir, 'policy.yaml');
  writeFileSync(file, offHoursPolicy());
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(engine: Engine, ...args: string[]) {
  const process = startCli(args, {
    REDIS_URL: harness.server.url,
    NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
    NIGHTSHIFT_API_URL: harness.sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_LOG_LEVEL: 'silent',
  });
  const code = await process.exited;
  return { code, stdout: process.stdout(), stderr: process.stderr() };
}

describe('drift and plan of a window', () => {
  it('drift lists every workspace with what its window wants, exits 3 while they run in off hours and 0 once paused', async () => {
    harness.sim.reset();
    const engine = harness.engine('drift-cli');
    const before = await cli(engine, 'drift', file, '--json');
    expect(before.code, before.stderr).toBe(3);
    const rows = JSON.parse(before.stdout) as DriftRow[];
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({
      window: 'office',
      desired: 'Stopped',
      actual: 'Active',
      drift: true,
      owner: null,
      hold: null,
    });
    const table = await cli(engine, 'drift', file);
    expect(table.stdout).toMatch(/^WINDOW +WORKSPACE +DESIRED +ACTUAL +DRIFT +OWNER +HOLD +WHY$/m);
    expect(table.stdout).toContain('3 of 3 workspace(s) differ');

    const plan = await cli(engine, 'plan', file, '--json');
    expect(plan.code, plan.stderr).toBe(0);
    const [planned] = JSON.parse(plan.stdout) as RunSummary[];
    expect(planned?.counts).toMatchObject({ planned: 3 });
    expect(planned?.targets[0]?.reason).toBe('would pause: outside uptime: pausing');

    const run = await cli(engine, 'run', file, 'office', '--inline', '--json', '--quiet');
    expect(run.code, run.stderr).toBe(0);
    for (const ws of harness.sim.state.workspaces) Object.assign(ws, workspaceStatusFields('Stopped'));
    const after = await cli(engine, 'drift', file, '--json');
    expect(after.code, after.stderr).toBe(0);
    expect((JSON.parse(after.stdout) as DriftRow[]).map((row) => [row.drift, row.owner?.name])).toEqual(
      Array(3).fill([false, 'office']),
    );
  });

  it('plan without REDIS_URL says what it cannot know, and changes nothing', async () => {
    harness.sim.reset();
    const plan = startCli(['plan', file, '--json'], {
      REDIS_URL: '',
      NIGHTSHIFT_API_URL: harness.sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_LOG_LEVEL: 'silent',
    });
    expect(await plan.exited, plan.stderr()).toBe(0);
    const [planned] = JSON.parse(plan.stdout()) as RunSummary[];
    expect(planned?.targets[0]?.reason).toMatch(
      /^would pause it if this off period's start has not been applied yet, or left it to do; unknown without Redis/,
    );
    expect(harness.sim.state.workspaces.every((ws) => ws.status === 'Active')).toBe(true);
  });
});

describe('windows that meet only at run time', () => {
  it('a workgroup one window names and another gives by id: drift counts its workspaces as differing with the reason (exit 3), plan reports each as a finding (exit 3)', async () => {
    harness.sim.reset();
    const engine = harness.engine('conflict-cli');
    const [group] = harness.sim.state.workgroups as [(typeof harness.sim.state.workgroups)[number]];
    const conflicting = join(dir, 'conflict.yaml');
    // always in uptime, resume: owned: without the conflict nothing would differ
    writeFileSync(
      conflicting,
      `version: 1
windows:
  by-name:
    target: { workgroups: ["${group.name}"] }
    uptime: "Mon-Sun 00:00-24:00"
  by-id:
    target: { workgroups: ["${group.workgroup_id}"] }
    uptime: "Mon-Sun 00:00-24:00"
`,
    );
    const drift = await cli(engine, 'drift', conflicting, '--json');
    expect(drift.code, drift.stderr).toBe(3);
    const rows = JSON.parse(drift.stdout) as DriftRow[];
    expect(rows).toHaveLength(6);
    for (const row of rows) {
      expect(row.drift).toBe(true);
      expect(row.why).toMatch(/^also under window by-(name|id): a workspace can be under one window only/);
    }
    expect((await cli(engine, 'drift', conflicting)).stdout).toContain('6 of 6 workspace(s) differ');

    const plan = await cli(engine, 'plan', conflicting);
    expect(plan.code, plan.stderr).toBe(3);
    expect(plan.stdout).toMatch(/^by-name +reconcile-window +3 +0 +3 +0 +3 warning$/m);
    expect(plan.stdout).not.toContain('nothing would change');
    expect(plan.stdout).toMatch(
      /^warning +window-conflict +\S+ +\S+ is under windows "by-name" and "by-id": neither acts on it until the policy puts it under one/m,
    );
  }, 60_000);
});

describe('holds from the command line', () => {
  it('hold, holds and release: placed with who and why, listed, released; the log keeps all three', async () => {
    const engine = harness.engine('holds-cli');
    const placed = await cli(
      engine,
      'hold',
      'dev-*/*',
      '--force',
      '--state',
      'active',
      '--for',
      '2h',
      '--reason',
      'customer demo',
      '--by',
      'ana',
      '--json',
    );
    expect(placed.code, placed.stderr).toBe(0);
    const hold = JSON.parse(placed.stdout) as Hold;
    expect(hold).toMatchObject({ pattern: 'dev-*/*', state: 'active', reason: 'customer demo', by: 'ana' });
    expect(Date.parse(hold.until) - Date.parse(hold.createdAt)).toBe(2 * 3_600_000);

    const listed = await cli(engine, 'holds');
    expect(listed.stdout).toMatch(
      /^WORKSPACES +STATE +UNTIL +BY +SINCE +REASON\ndev-\*\/\* +active +\S+ +ana +\S+ +customer demo$/m,
    );

    const released = await cli(engine, 'release', 'dev-*/*', '--by', 'bo');
    expect(released.stdout).toBe(`released dev-*/* held active until ${hold.until} by ana: customer demo\n`);
    expect((await cli(engine, 'holds')).stdout).toBe('no holds\n');
    const log = JSON.parse((await cli(engine, 'holds', '--log', '--json')).stdout) as {
      event: string;
      by?: string;
    }[];
    expect(log.map((event) => [event.event, event.by])).toEqual([
      ['released', 'bo'],
      ['held', undefined],
    ]);
    // six commands, two of which list the fleet: slow on a loaded machine
  }, 60_000);

  it.each([
    [
      ['hold', 'dev-alpha', '--state', 'active', '--for', '2h', '--reason', 'x'],
      'expected <workgroup>/<workspace>',
    ],
    [['hold', 'a/b', '--state', 'up', '--for', '2h', '--reason', 'x'], 'Allowed choices are active, stopped'],
    [
      ['hold', 'a/b', '--state', 'active', '--reason', 'x'],
      'give exactly one of --for <duration> and --until <instant>',
    ],
    [['hold', 'a/b', '--state', 'active', '--for', '2h'], '--reason must say why'],
    [
      ['hold', 'a/b', '--state', 'active', '--for', '2h', '--until', '2099-01-01T00:00:00Z', '--reason', 'x'],
      'give one of --for <duration> and --until <instant>, not both',
    ],
    [
      ['hold', 'a/b', '--state', 'active', '--until', '2020-01-01T00:00:00Z', '--reason', 'x'],
      'is in the past',
    ],
    [
      ['hold', 'a/b', '--state', 'active', '--for', '2 hours', '--reason', 'x'],
      'expected a duration like 90m, 2h or 3d',
    ],
    [['release', 'a/b'], 'no hold on "a/b" (no holds in force)'],
  ])('refuses %j with exit 2 and says why', async (args, message) => {
    const engine = harness.engine('holds-cli-bad');
    const result = await cli(engine, ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});

describe('what a hold holds', () => {
  it.each([
    ['!dev-alpha/kg', 'negated globs are not supported'],
    ['dev-alpha/[kg', '"[" is never closed in "[kg"'],
  ])('hold refuses %j with exit 2 and places nothing', async (pattern, message) => {
    const engine = harness.engine('holds-refused');
    const result = await cli(engine, 'hold', pattern, '--state', 'active', '--for', '1h', '--reason', 'x');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect((await engine.state.holds.active(new Date())).length).toBe(0);
  });

  it('hold refuses a pattern that matches no workspace of the fleet, naming the closest (exit 2); --force places it', async () => {
    harness.sim.reset();
    const engine = harness.engine('holds-unmatched');
    const [ws] = harness.sim.state.workspaces as [(typeof harness.sim.state.workspaces)[number]];
    const group = harness.sim.state.workgroups.find((wg) => wg.workgroup_id === ws.workgroup_id);
    const typo = `${group?.name}/${ws.name}x`;
    const refused = await cli(engine, 'hold', typo, '--state', 'active', '--for', '1h', '--reason', 'x');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `"${typo}" matches no workspace of the fleet (listed from the API just now); did you mean "${group?.name}/${ws.name}"?`,
    );
    expect((await engine.state.holds.active(new Date())).length).toBe(0);
    const forced = await cli(
      engine,
      'hold',
      typo,
      '--state',
      'active',
      '--for',
      '1h',
      '--reason',
      'x',
      '--force',
    );
    expect(forced.code, forced.stderr).toBe(0);
    expect((await engine.state.holds.active(new Date())).map((hold) => hold.pattern)).toEqual([typo]);
  }, 60_000);

  it('a hold on workspaces no window covers: hold warns of them, holds notes them, drift shows them and exits 3 while they are not in the held state', async () => {
    harness.sim.reset();
    for (const ws of harness.sim.state.workspaces) Object.assign(ws, workspaceStatusFields('Active'));
    const engine = harness.engine('holds-idle');
    const [group] = harness.sim.state.workgroups as [(typeof harness.sim.state.workgroups)[number]];
    const idle = harness.sim.state.workspaces.find((ws) => ws.workgroup_id === group.workgroup_id);
    const policy = join(dir, 'held.yaml');
    // always in uptime, so the window itself wants nothing of what it covers
    writeFileSync(
      policy,
      `version: 1
windows:
  office:
    target: { workgroups: ["${group.name}"], exclude: ["${group.name}/${idle?.name}"] }
    uptime: "Mon-Sun 00:00-24:00"
`,
    );
    const pattern = `${group.name}/*`;
    const placed = await cli(
      engine,
      ...['hold', pattern, '--state', 'stopped', '--for', '1h'],
      ...['--reason', 'budget freeze', '--policy', policy],
    );
    expect(placed.code, placed.stderr).toBe(0);
    expect(placed.stderr).toContain(
      `warning: nothing acts on 1 of the 3 workspace(s) "${pattern}" matches, so the hold changes nothing there: no window covers them and no pause or resume job targets them in ${policy}: ${group.name}/${idle?.name} (Active)`,
    );
    const listed = await cli(engine, 'holds', '--policy', policy);
    expect(listed.stdout).toMatch(/ +NOTE\n/);
    expect(listed.stdout).toContain(`nothing acts on 1 of 3: ${group.name}/${idle?.name} (Active)`);

    const drift = await cli(engine, 'drift', policy, '--json');
    expect(drift.code, drift.stderr).toBe(3);
    const rows = JSON.parse(drift.stdout) as DriftRow[];
    expect(rows.filter((row) => row.window === null)).toEqual([
      expect.objectContaining({
        workspace: idle?.name,
        desired: 'Stopped',
        actual: 'Active',
        drift: true,
        hold: expect.objectContaining({ state: 'stopped', reason: 'budget freeze' }),
        why: `held stopped (${pattern}), but no window covers it and no pause or resume job targets it: nothing brings it to Stopped`,
      }),
    ]);
  }, 90_000);
});

describe('savings from the command line', () => {
  it('prints the owned paused hours and estimated cost per workspace, as JSON with the fields documented', async () => {
    const engine = harness.engine('savings-cli');
    const ago = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
    await engine.state.ledger.put({
      key: 'wg/ws1',
      workgroupId: 'wg',
      workspaceId: 'ws1',
      workgroupName: 'dev-alpha',
      workspaceName: 'kg',
      owner: 'office',
      ownerKind: 'window',
      runId: 'office@1',
      state: 'confirmed',
      intendedAt: ago(10),
      pausedAt: ago(10),
      pricePerHour: 1.2,
      currency: 'EUR',
    });
    await engine.state.ledger.end('wg/ws1', 'resumed', new Date(Date.now() - 4 * 3_600_000));
    const json = await cli(engine, 'savings', '--since', '7d', '--json');
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as SavingsReport;
    expect(Object.keys(report)).toEqual([
      'since',
      'until',
      'currency',
      'totalPausedHours',
      'totalEstimatedCost',
      'workspaces',
      'owners',
    ]);
    expect(report).toMatchObject({ currency: 'EUR', totalPausedHours: 6, totalEstimatedCost: 7.2 });
    expect(report.workspaces).toEqual([
      {
        workgroup: 'dev-alpha',
        workspace: 'kg',
        workgroupId: 'wg',
        workspaceId: 'ws1',
        pausedHours: 6,
        estimatedCost: 7.2,
      },
    ]);
    // by the window or job whose pauses they were
    expect(report.owners).toEqual([{ owner: 'office', kind: 'window', pausedHours: 6, estimatedCost: 7.2 }]);
    const table = await cli(engine, 'savings');
    expect(table.stdout).toContain('6.00 hours paused by nightshift');
    expect(table.stdout).toContain('estimated cost avoided: 7.20 EUR');
    expect((await cli(engine, 'savings', '--since', 'last week')).code).toBe(2);
  });
});

describe('a stranded workspace from the command line', () => {
  it('one whose ledger record is lost is reported by the reconciliation and by drift (exit 3), taken back by adopt, and handed back at the next uptime start', async () => {
    harness.sim.reset();
    const engine = harness.engine('stranded-cli');
    const paused = await cli(engine, 'run', file, 'office', '--inline', '--json', '--quiet');
    expect(paused.code, paused.stderr).toBe(0);
    for (const ws of harness.sim.state.workspaces) Object.assign(ws, workspaceStatusFields('Stopped'));
    const [lost] = harness.sim.state.workspaces as [(typeof harness.sim.state.workspaces)[number]];
    const key = `${lost.workgroup_id}/${lost.workspace_id}`;
    // a record lost outside the ledger's rules: nothing would hand the workspace back
    await engine.redis.hdel(engine.keys.owned, key);

    const reconciled = await cli(engine, 'run', file, 'office', '--inline', '--json', '--quiet');
    expect(reconciled.code, reconciled.stderr).toBe(3);
    const summary = JSON.parse(reconciled.stdout) as RunSummary;
    expect(summary.findings).toEqual([
      expect.objectContaining({
        rule: 'stranded',
        severity: 'critical',
        message: expect.stringContaining('nightshift adopt office'),
      }),
    ]);
    expect(summary.evidence?.window).toMatchObject({ stranded: 1 });

    const drift = await cli(engine, 'drift', file, '--json');
    expect(drift.code, drift.stderr).toBe(3);
    const rows = JSON.parse(drift.stdout) as DriftRow[];
    expect(rows.filter((row) => row.stranded).map((row) => [row.workspaceId, row.stranded?.owner])).toEqual([
      [lost.workspace_id, 'office'],
    ]);
    expect((await cli(engine, 'drift', file)).stdout).toContain(
      '1 workspace(s) paused by nightshift are owned by nobody (stranded): nightshift adopt office hands them back',
    );

    const dryRun = await cli(engine, 'adopt', 'office', '--policy', file, '--dry-run');
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stdout).toContain(
      "1 stranded workspace(s) would be office's again (dry run: nothing written)",
    );
    expect((await engine.state.ledger.all()).has(key)).toBe(false);
    const adopted = await cli(engine, 'adopt', 'office', '--policy', file, '--json');
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(JSON.parse(adopted.stdout)).toEqual([
      expect.objectContaining({ workspaceId: lost.workspace_id, adopted: true }),
    ]);
    expect((await engine.state.ledger.all()).get(key)).toMatchObject({ owner: 'office', state: 'confirmed' });
    expect((await cli(engine, 'drift', file)).code).toBe(0);
    expect((await cli(engine, 'adopt', 'nosuch', '--policy', file)).code).toBe(2);

    // the next uptime start, hours on: every workspace the window paused comes back. The
    // worker's clock is set to the middle of the uptime hour, so that no hour boundary passes
    // between the policy's uptime and the worker's reading of its clock, whenever the test runs.
    const hour = 3_600_000;
    const morningAt = Math.floor((Date.now() + 3 * hour) / hour) * hour + hour / 2;
    const shift = morningAt - Date.now();
    const worker = engine.worker(harness.sim.url, {
      clock: { ...systemClock, now: () => Date.now() + shift },
    });
    try {
      const morning = await engine.waitForRun(await engine.enqueue(offHoursPolicy(morningAt), 'office'));
      expect(morning.counts).toMatchObject({ total: 3, succeeded: 3 });
    } finally {
      await worker.close(1_000);
    }
    expect((await engine.state.ledger.all()).size).toBe(0);
    expect((await engine.state.ledger.journal()).size).toBe(0);
    // nine CLI commands, each a process of its own
  }, 90_000);
});
