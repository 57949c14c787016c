import { describe, expect, it } from 'vitest';
import { mutatingCalls, useActionSim, workgroupNamed } from '../../helpers/actions.js';
import { allowListPath, allowListState, type GroupSpec } from './allow-list-fixtures.js';

const policy = `version: 1
jobs:
  check:
    schedule: "45 19 * * *"
    action: check-ip
    target: { workgroups: ["*"] }
    retry: { attempts: 8, backoff: 1s, strategy: fixed }
    concurrency: 1
`;

/** The runner is 127.0.0.1: prod-core admits it, dev-alpha does not, staging-eu would not but is not enforced. */
const GROUPS: GroupSpec[] = [
  {
    enabled: true,
    entries: [
      ['10.0.0.0/8', 'VPC'],
      ['127.0.0.0/24', 'local tooling'],
    ],
  },
  { enabled: true, entries: [['203.0.113.5/32', 'office egress']] },
  { enabled: false, entries: [['203.0.113.5/32', 'office egress']] },
];

describe('check-ip against the simulator', () => {
  const harness = useActionSim(() => allowListState(GROUPS), { proxy: true });

  const idOf = (name: string) => workgroupNamed(harness.sim.state, name).workgroup_id;

  it('reports runner-blocked for each enforced allow list that does not admit the runner, with the IP the API saw', async () => {
    const run = await harness.run(policy, 'check');
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.findings).toEqual([
      {
        rule: 'allow-list/runner-blocked',
        severity: 'warning',
        subject: 'dev-alpha',
        message: "the allow list does not admit this runner's address 127.0.0.1",
      },
    ]);
    const byName = Object.fromEntries(run.summary.targets.map((t) => [t.workgroupName, t]));
    expect(byName['prod-core']).toMatchObject({
      outcome: 'succeeded',
      detail: { currentIp: '127.0.0.1', allowed: true },
    });
    expect(byName['dev-alpha']).toMatchObject({
      outcome: 'succeeded',
      detail: { currentIp: '127.0.0.1', allowed: false },
    });
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('skips a workgroup whose allow list is disabled, without asking: it blocks nobody', async () => {
    const run = await harness.run(policy, 'check');
    expect(run.summary.targets.find((t) => t.workgroupName === 'staging-eu')).toMatchObject({
      outcome: 'skipped',
      reason: 'allow list disabled: it blocks nobody',
    });
    expect(run.requests.filter((r) => r.path === allowListPath(idOf('staging-eu'), '/current'))).toEqual([]);
  });

  it('a dry run makes only read-only calls and reports the same finding', async () => {
    const run = await harness.run(policy, 'check', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.findings.map((f) => f.subject)).toEqual(['dev-alpha']);
    expect(run.summary.counts).toMatchObject({ total: 3, planned: 2, skipped: 1 });
  });

  it('retries a transient server error and reports the finding once', async () => {
    // seed 4 fails the first check: prod-core needs a second attempt
    harness.sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['checkCurrentIp'] });
    const run = await harness.run(policy, 'check');
    expect(run.requests.filter((r) => r.status === 500).length).toBeGreaterThan(0);
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets.some((t) => t.attempts > 1)).toBe(true);
    expect(run.summary.findings.map((f) => f.subject)).toEqual(['dev-alpha']);
  });

  it('fails a workgroup whose check the API refuses, after one attempt, and reports no finding for it', async () => {
    const victim = idOf('dev-alpha');
    harness.proxy.refuse({
      method: 'GET',
      path: allowListPath(victim, '/current'),
      status: 403,
      type: 'Forbidden',
    });
    const run = await harness.run(policy, 'check');
    expect(run.summary.outcome).toBe('partial');
    expect(run.summary.targets.find((t) => t.workgroupId === victim)).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { type: 'Forbidden', retryable: false },
    });
    expect(harness.proxy.calls.filter((c) => c.path === allowListPath(victim, '/current'))).toHaveLength(1);
    expect(run.summary.findings).toEqual([]);
  });
});
