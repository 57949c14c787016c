import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { PolicyError, parsePolicy } from '../../../src/policy/index.js';
import { mutatingCalls, useActionSim, workgroupNamed } from '../../helpers/actions.js';
import { allowListPath, allowListState, type GroupSpec } from './allow-list-fixtures.js';

const policy = (confirm = '    confirm: true\n') => `version: 1
jobs:
  open:
    schedule: "0 0 1 1 *"
    action: disable-allow-list
    target: { workgroups: ["*"] }
    retry: { attempts: 8, backoff: 1s, strategy: fixed }
    concurrency: 1
${confirm}`;

/** prod-core and staging-eu are enforced; dev-alpha is already disabled. */
const GROUPS: GroupSpec[] = [
  {
    enabled: true,
    entries: [
      ['127.0.0.1/32', 'local tooling'],
      ['198.51.100.0/24', 'VPN'],
    ],
  },
  { enabled: false, entries: [['203.0.113.5/32', 'office egress']] },
  { enabled: true, entries: [['192.0.2.9/32', 'CI runners']] },
];

describe('disable-allow-list against the simulator', () => {
  const harness = useActionSim(() => allowListState(GROUPS), { proxy: true });

  const workgroup = (name: string) => workgroupNamed(harness.sim.state, name);
  const enforced = () =>
    Object.fromEntries(harness.sim.state.workgroups.map((wg) => [wg.name, wg.enable_allow_list]));
  const outcomes = (targets: readonly { workgroupName?: string; outcome: string; reason?: string }[]) =>
    Object.fromEntries(
      targets.map((t) => [t.workgroupName, t.reason ? `${t.outcome}: ${t.reason}` : t.outcome]),
    );

  it('disables enforcement where it is on, keeps the entries, and skips the one already disabled', async () => {
    const run = await harness.run(policy(), 'open');
    expect(run.summary.outcome).toBe('succeeded');
    expect(outcomes(run.summary.targets)).toEqual({
      'prod-core': 'succeeded',
      'dev-alpha': 'skipped: already disabled',
      'staging-eu': 'succeeded',
    });
    expect(enforced()).toEqual({ 'prod-core': false, 'dev-alpha': false, 'staging-eu': false });
    expect(workgroup('prod-core').allow_list.map((e) => e.cidr)).toEqual(['127.0.0.1/32', '198.51.100.0/24']);
    expect(mutatingCalls(run)).toEqual(['disableAllowList', 'disableAllowList']);
  });

  it('a second run finds every allow list disabled and calls nothing that changes state', async () => {
    await harness.run(policy(), 'open');
    const again = await harness.run(policy(), 'open');
    expect(again.summary.counts).toMatchObject({ total: 3, skipped: 3 });
    expect(mutatingCalls(again)).toEqual([]);
  });

  it('a dry run plans the disables, makes only read-only calls and changes nothing', async () => {
    const run = await harness.run(policy(), 'open', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(outcomes(run.summary.targets)).toEqual({
      'prod-core': 'planned: would disable allow-list enforcement',
      'dev-alpha': 'skipped: already disabled',
      'staging-eu': 'planned: would disable allow-list enforcement',
    });
    expect(enforced()).toEqual({ 'prod-core': true, 'dev-alpha': false, 'staging-eu': true });
  });

  it('retries a transient server error until the disable goes through', async () => {
    // seed 4 fails the first disable: prod-core needs a second attempt
    harness.sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['disableAllowList'] });
    const run = await harness.run(policy(), 'open');
    expect(run.requests.filter((r) => r.status === 500).length).toBeGreaterThan(0);
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets.find((t) => t.workgroupName === 'prod-core')).toMatchObject({
      outcome: 'succeeded',
      attempts: 2,
    });
    expect(enforced()).toEqual({ 'prod-core': false, 'dev-alpha': false, 'staging-eu': false });
  });

  it('after a lost answer, re-reads on the retry and skips a disable that already took effect', async () => {
    const victim = workgroup('prod-core').workgroup_id;
    const disable = allowListPath(victim, '/disable');
    harness.proxy.refuse({
      method: 'PUT',
      path: disable,
      status: 500,
      type: 'Internal-Error',
      forwardFirst: true,
      times: 1,
    });
    const run = await harness.run(policy(), 'open');
    expect(run.summary.targets.find((t) => t.workgroupId === victim)).toMatchObject({
      outcome: 'skipped',
      reason: 'already disabled',
      attempts: 2,
    });
    expect(harness.proxy.calls.filter((c) => c.path === disable)).toHaveLength(1);
  });

  it('treats a refusal as done when the re-read shows the allow list disabled', async () => {
    const victim = workgroup('prod-core').workgroup_id;
    const disable = allowListPath(victim, '/disable');
    harness.proxy.refuse({
      method: 'PUT',
      path: disable,
      status: 400,
      type: 'Bad-Request',
      forwardFirst: true,
    });
    const run = await harness.run(policy(), 'open');
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets.find((t) => t.workgroupId === victim)).toMatchObject({
      outcome: 'skipped',
      reason: 'already disabled',
      attempts: 1,
    });
    // the run's own listing, then the re-read after the refusal
    expect(run.requests.filter((r) => r.operation === 'listWorkgroups')).toHaveLength(2);
  });

  it('fails a workgroup whose disable is refused for good, after one attempt, and leaves it enforced', async () => {
    const victim = workgroup('staging-eu').workgroup_id;
    const disable = allowListPath(victim, '/disable');
    harness.proxy.refuse({ method: 'PUT', path: disable, status: 403, type: 'Forbidden' });
    const run = await harness.run(policy(), 'open');
    expect(run.summary.outcome).toBe('partial');
    expect(run.summary.targets.find((t) => t.workgroupId === victim)).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { type: 'Forbidden', status: 403, retryable: false },
    });
    expect(harness.proxy.calls.filter((c) => c.path === disable)).toHaveLength(1);
    expect(enforced()).toEqual({ 'prod-core': false, 'dev-alpha': false, 'staging-eu': true });
  });
});

describe('disable-allow-list in a policy', () => {
  const load = (text: string) => parsePolicy(text, 'open.yaml', { registry: actionRegistry, env: {} });
  const refusal = (text: string): PolicyError => {
    try {
      load(text);
    } catch (error) {
      if (error instanceof PolicyError) return error;
      throw error;
    }
    throw new Error('the policy was accepted');
  };

  it('is refused without confirm: true, naming the action line', () => {
    expect(refusal(policy('')).problems).toEqual([
      expect.objectContaining({
        file: 'open.yaml',
        line: 5,
        message:
          'jobs.open.action: action "disable-allow-list" is destructive: add "confirm: true" to the job',
      }),
    ]);
  });

  it('is refused with confirm: false, naming the confirm line', () => {
    expect(refusal(policy('    confirm: false\n')).message).toMatch(
      /open\.yaml:9:\d+: jobs\.open\.confirm: must be true: action "disable-allow-list" is destructive/,
    );
  });

  it('is accepted with confirm: true', () => {
    expect(load(policy()).jobs[0]?.confirm).toBe(true);
  });
});
