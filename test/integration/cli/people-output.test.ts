import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DriftRow } from '../../../src/cli/fleet-report.js';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { assertBuilt, type Engine, startCli, useEngineHarness } from '../../helpers/engine.js';

const POLICY = `version: 1
windows:
  office:
    target: { workgroups: ["*"] }
    uptime: "Mon-Sun 00:00-24:00"
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

function policyFile(text = POLICY): string {
  const file = join(mkdtempSync(join(tmpdir(), 'nightshift-people-')), 'policy.yaml');
  writeFileSync(file, text);
  return file;
}

describe('what the commands people read print', () => {
  const harness = useEngineHarness({ workgroups: 2, workspacesPerWorkgroup: 2 });

  /** As on a terminal: readable log lines, and no level asked for. */
  const env = (engine: Engine) => ({
    NIGHTSHIFT_API_URL: harness.sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    REDIS_URL: harness.server.url,
    NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
    NIGHTSHIFT_LOG_LEVEL: '',
    NIGHTSHIFT_LOG_FORMAT: 'pretty',
  });

  it('plan and drift print their tables without a log line per API call (they log at warn unless asked)', async () => {
    assertBuilt();
    const engine = harness.engine('people-quiet');
    const file = policyFile();
    const plan = startCli(['plan', file], env(engine));
    expect(await plan.exited, plan.output()).toBe(0);
    expect(plan.stderr()).toBe('');
    expect(plan.stdout()).toMatch(/^JOB +ACTION/);
    const drift = startCli(['drift', file], env(engine));
    expect(await drift.exited, drift.output()).toBe(0);
    expect(drift.stderr()).toBe('');
    expect(drift.stdout()).toMatch(/^WINDOW +WORKSPACE/);
    // asked for, the API calls are there
    const asked = startCli(['plan', file], { ...env(engine), NIGHTSHIFT_LOG_LEVEL: 'info' });
    expect(await asked.exited).toBe(0);
    expect(asked.stderr()).toContain('api call');
  });

  it('drift --json gives each hold with the pattern it was placed on, what `release` takes', async () => {
    const engine = harness.engine('people-hold');
    const ws = harness.sim.state.workspaces[0];
    const wg = harness.sim.state.workgroups.find((group) => group.workgroup_id === ws?.workgroup_id);
    if (!ws || !wg) throw new Error('the seeded fleet has no workspace');
    const pattern = `${wg.name}/*`;
    const now = new Date();
    await engine.state.holds.place({
      pattern,
      state: 'active',
      until: new Date(now.getTime() + 3_600_000).toISOString(),
      reason: 'customer demo',
      by: 'test',
      createdAt: now.toISOString(),
    });
    const drift = startCli(['drift', policyFile(), '--json'], env(engine));
    expect(await drift.exited, drift.output()).toBe(0);
    const rows = JSON.parse(drift.stdout()) as DriftRow[];
    const held = rows.find((row) => row.workspaceId === ws.workspace_id);
    expect(held?.hold).toMatchObject({ pattern, state: 'active', reason: 'customer demo' });
  });

  it('run counts one target as "1 target"', async () => {
    const engine = harness.engine('people-run');
    const ws = harness.sim.state.workspaces[0];
    const one = `version: 1
jobs:
  one-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"], workspaces: ["${ws?.workspace_id}"] }
`;
    const run = startCli(['run', policyFile(one), 'one-pause', '--inline', '--dry-run'], env(engine));
    expect(await run.exited, run.output()).toBe(0);
    expect(run.stdout()).toMatch(/^ {2}1 target: /m);
  });

  it("run and plan name a target's structured details (an upgrade's before) and print them only with --details", async () => {
    assertBuilt();
    const engine = harness.engine('people-details');
    const [group] = harness.sim.state.workgroups;
    const file = policyFile(`version: 1
jobs:
  upgrade:
    schedule: "0 3 * * 6"
    action: upgrade-cloud-provider
    target: { workgroups: ["${group?.name}"] }
    confirm: true
    timeout: 2h
    with:
      components: { engine: "9.9.9" }
`);
    const notShown = /^ {2}before of 1 target\(s\) not shown: --details \(or --json\) shows them$/m;
    for (const command of [
      ['run', file, 'upgrade', '--inline', '--dry-run'],
      ['plan', file, '--job', 'upgrade'],
    ]) {
      const short = startCli(command, env(engine));
      expect(await short.exited, short.output()).toBe(0);
      expect(short.stdout(), command[0]).toMatch(notShown);
      expect(short.stdout(), command[0]).not.toContain('before={');
      const full = startCli([...command, '--details'], env(engine));
      expect(await full.exited, full.output()).toBe(0);
      expect(full.stdout(), command[0]).toContain('before={');
      expect(full.stdout(), command[0]).not.toContain('not shown');
    }
  });
});
