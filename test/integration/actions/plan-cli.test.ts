import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_API_KEY, seedState } from '../../../src/sim/index.js';
import { READ_ONLY_OPERATIONS, useActionSim } from '../../helpers/actions.js';
import { assertBuilt, startCli } from '../../helpers/engine.js';

const POLICY = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    retry: { attempts: 2, backoff: 1s }
  audit:
    schedule: "0 6 * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
    with: { maxPrefix: 32 }
`;

describe('nightshift plan and the exit codes of run', () => {
  const harness = useActionSim(() =>
    seedState({ seed: 5, fleet: { workgroups: 3, workspacesPerWorkgroup: 3 } }),
  );
  let file: string;
  let env: Record<string, string>;
  beforeAll(() => {
    assertBuilt();
    file = join(mkdtempSync(join(tmpdir(), 'nightshift-plan-')), 'policy.yaml');
    writeFileSync(file, POLICY);
    env = {
      NIGHTSHIFT_API_URL: harness.sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_LOG_LEVEL: 'warn',
    };
  });

  it('plan makes only read-only calls, plans every job, and exits 3 because the audit has findings', async () => {
    const since = harness.sim.requests().at(-1)?.seq ?? 0;
    const cli = startCli(['plan', file, '--json'], env);
    expect(await cli.exited).toBe(3);
    const plans = JSON.parse(cli.output().slice(cli.output().indexOf('['))) as RunSummary[];
    expect(plans.map((plan) => [plan.job, plan.dryRun])).toEqual([
      ['nightly-pause', true],
      ['audit', true],
    ]);
    const active = harness.sim.state.workspaces.filter((ws) => ws.status === 'Active').length;
    expect(plans[0]?.counts.planned).toBe(active);
    expect(plans[1]?.findings.some((finding) => finding.rule === 'allow-list/too-wide')).toBe(true);
    const calls = harness.sim.requests().filter((entry) => entry.seq > since);
    expect(calls.filter((entry) => !READ_ONLY_OPERATIONS.has(entry.operation ?? ''))).toEqual([]);
    expect(harness.sim.state.workspaces.filter((ws) => ws.status === 'Active')).toHaveLength(active);
  });

  it('plan --job prints one plan as a table and exits 0 when it has no findings', async () => {
    const cli = startCli(['plan', file, '--job', 'nightly-pause'], env);
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toMatch(/nightly-pause \(pause\) .*: succeeded \[dry run\]/);
    expect(cli.output()).toContain('would pause (Active)');
    expect(cli.output()).not.toContain('audit');
  });

  it('run --inline exits 3 for an audit that succeeded with findings and lists them', async () => {
    const cli = startCli(['run', file, 'audit', '--inline'], env);
    expect(await cli.exited).toBe(3);
    expect(cli.output()).toMatch(/\d+ finding\(s\):/);
    expect(cli.output()).toContain('allow-list/too-wide');
  });

  it('run --inline exits 1 when targets fail, and 0 once they are done', async () => {
    harness.sim.setFaults({ errorRate: 1, operations: ['pauseWorkspace'] });
    const failing = startCli(['run', file, 'nightly-pause', '--inline'], env);
    expect(await failing.exited).toBe(1);
    harness.sim.setFaults({});
    const passing = startCli(['run', file, 'nightly-pause', '--inline'], env);
    expect(await passing.exited).toBe(0);
  });
});
