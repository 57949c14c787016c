import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { PolicyError, parsePolicy } from '../../../src/policy/index.js';
import type { RunSummary } from '../../../src/runs/index.js';
import { mutatingCalls, useActionSim, workgroupNamed } from '../../helpers/actions.js';
import { allowListPath, allowListState, type GroupSpec } from './allow-list-fixtures.js';

const policy = (params = '') => `version: 1
jobs:
  audit:
    schedule: "0 6 * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
    retry: { attempts: 8, backoff: 1s, strategy: fixed }
    concurrency: 1
${params}`;

const RULES = `    with:
      forbid: ["10.0.0.0/8"]
      maxPrefix: { ipv4: 16, ipv6: 48 }
      baseline: ["127.0.0.1", "198.51.100.7/32"]
`;

/** prod-core breaks most rules, dev-alpha is not enforced, staging-eu does not admit the runner (127.0.0.1). */
const MIXED: GroupSpec[] = [
  {
    enabled: true,
    entries: [
      ['127.0.0.1/32', 'local tooling'],
      ['0.0.0.0/0'],
      ['10.1.2.0/24', 'peered VPC'],
      ['2001:db8::/32', 'IPv6 office'],
      ['198.51.100.7', '  '],
    ],
  },
  { enabled: false, entries: [['127.0.0.1/32', 'local tooling']] },
  { enabled: true, entries: [['203.0.113.5/32', 'office egress']] },
];

const found = (summary: RunSummary) => summary.findings.map((f) => `${f.rule} ${f.subject}`).sort();

describe('allow-list-audit against the simulator', () => {
  const harness = useActionSim(() => allowListState(MIXED), { proxy: true });

  const idOf = (name: string) => workgroupNamed(harness.sim.state, name).workgroup_id;

  it('reports each rule an entry breaks, with its workgroup and range, and changes nothing', async () => {
    const run = await harness.run(policy(RULES), 'audit');
    expect(run.summary.outcome).toBe('succeeded');
    expect(found(run.summary)).toEqual(
      [
        'allow-list/forbidden-cidr prod-core 0.0.0.0/0',
        'allow-list/too-wide prod-core 0.0.0.0/0',
        'allow-list/no-note prod-core 0.0.0.0/0',
        'allow-list/unexpected prod-core 0.0.0.0/0',
        'allow-list/forbidden-cidr prod-core 10.1.2.0/24',
        'allow-list/unexpected prod-core 10.1.2.0/24',
        'allow-list/too-wide prod-core 2001:db8::/32',
        'allow-list/unexpected prod-core 2001:db8::/32',
        'allow-list/no-note prod-core 198.51.100.7',
        'allow-list/disabled dev-alpha',
        'allow-list/missing-baseline dev-alpha 198.51.100.7/32',
        'allow-list/runner-blocked staging-eu',
        'allow-list/unexpected staging-eu 203.0.113.5/32',
        'allow-list/missing-baseline staging-eu 127.0.0.1',
        'allow-list/missing-baseline staging-eu 198.51.100.7/32',
      ].sort(),
    );
    expect(run.summary.findings.find((f) => f.rule === 'allow-list/disabled')?.severity).toBe('critical');
    expect(run.summary.findings.find((f) => f.rule === 'allow-list/runner-blocked')?.message).toContain(
      '127.0.0.1',
    );
    const detail = Object.fromEntries(run.summary.targets.map((t) => [t.workgroupName, t.detail]));
    expect(detail).toEqual({
      'prod-core': { entries: 5, findings: 9, enforced: true },
      'dev-alpha': { entries: 1, findings: 2, enforced: false },
      'staging-eu': { entries: 1, findings: 4, enforced: true },
    });
    expect(run.summary.counts).toMatchObject({ total: 3, succeeded: 3 });
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('does not ask whether a disabled allow list admits the runner: it blocks nobody', async () => {
    const run = await harness.run(policy(), 'audit');
    const checked = run.requests.filter((r) => r.operation === 'checkCurrentIp').map((r) => r.path);
    expect(checked.sort()).toEqual(
      [allowListPath(idOf('prod-core'), '/current'), allowListPath(idOf('staging-eu'), '/current')].sort(),
    );
  });

  it('reports nothing for an allow list that meets every rule, and nothing for rules turned off', async () => {
    harness.sim.reset({
      state: allowListState([
        {
          enabled: true,
          entries: [
            ['127.0.0.1/32', 'local tooling'],
            ['198.51.100.7/32', 'VPN'],
            ['2001:db8::/48', 'IPv6 office'],
          ],
        },
        { enabled: false, entries: [['203.0.113.0/24']] },
      ]),
    });
    // the baseline writes the IPv6 range another way: the same block all the same
    const clean = await harness.run(
      policy(RULES.replace('"198.51.100.7/32"]', '"198.51.100.7/32", "2001:0db8:0::/48"]')),
      'audit',
    );
    expect(found(clean.summary).filter((f) => f.includes('prod-core'))).toEqual([]);
    expect(clean.summary.targets.find((t) => t.workgroupName === 'prod-core')).toMatchObject({
      outcome: 'succeeded',
      detail: { entries: 3, findings: 0 },
    });
    const off = await harness.run(
      policy('    with: { requireNote: false, requireEnabled: false, checkRunnerIp: false }\n'),
      'audit',
    );
    expect(off.summary.findings).toEqual([]);
    expect(off.summary.counts).toMatchObject({ total: 2, succeeded: 2 });
    expect(off.requests.some((r) => r.operation === 'checkCurrentIp')).toBe(false);
  });

  it('a dry run makes only read-only calls, reports the same findings and marks each workgroup planned', async () => {
    const real = await harness.run(policy(RULES), 'audit');
    const dry = await harness.run(policy(RULES), 'audit', { dryRun: true });
    expect(mutatingCalls(dry)).toEqual([]);
    expect(found(dry.summary)).toEqual(found(real.summary));
    expect(dry.summary.counts).toMatchObject({ total: 3, planned: 3 });
  });

  it('retries a transient server error and reports each finding once', async () => {
    const clean = await harness.run(policy(RULES), 'audit');
    // seed 4 fails the first and third runner checks: prod-core and staging-eu need a second
    // attempt, after their entries were already audited once
    harness.sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['checkCurrentIp'] });
    const run = await harness.run(policy(RULES), 'audit');
    expect(run.requests.filter((r) => r.status === 500)).toHaveLength(2);
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets.map((t) => t.attempts).sort()).toEqual([1, 2, 2]);
    expect(found(run.summary)).toEqual(found(clean.summary));
  });

  it('fails a workgroup whose allow list the API refuses to list, after one attempt; the others are audited', async () => {
    const victim = idOf('staging-eu');
    harness.proxy.refuse({ method: 'GET', path: allowListPath(victim), status: 403, type: 'Forbidden' });
    const run = await harness.run(policy(RULES), 'audit');
    expect(run.summary.outcome).toBe('partial');
    const failed = run.summary.targets.find((t) => t.outcome === 'failed');
    expect(failed).toMatchObject({
      workgroupId: victim,
      attempts: 1,
      error: { type: 'Forbidden', retryable: false },
    });
    expect(harness.proxy.calls.filter((c) => c.path === allowListPath(victim))).toHaveLength(1);
    expect(run.summary.counts).toMatchObject({ succeeded: 2, failed: 1 });
    expect(found(run.summary).some((f) => f.includes('staging-eu'))).toBe(false);
  });

  it('reports none of a workgroup’s findings when its runner check is refused: no half audit', async () => {
    const victim = idOf('prod-core');
    harness.proxy.refuse({
      method: 'GET',
      path: allowListPath(victim, '/current'),
      status: 404,
      type: 'Not-Found',
    });
    const run = await harness.run(policy(RULES), 'audit');
    expect(run.summary.targets.find((t) => t.workgroupId === victim)).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { type: 'Not-Found' },
    });
    expect(found(run.summary).some((f) => f.includes('prod-core'))).toBe(false);
  });
});

describe('allow-list-audit parameters in a policy', () => {
  const problems = (params: string) => {
    try {
      parsePolicy(policy(params), 'audit.yaml', { registry: actionRegistry, env: {} });
    } catch (error) {
      if (error instanceof PolicyError) return error.problems.map((p) => `${p.line}: ${p.message}`);
      throw error;
    }
    return [];
  };

  it('refuses a range that is not a CIDR, at its line', () => {
    const [problem] = problems('    with:\n      forbid:\n        - 10.0.0.0/8\n        - 10.0.0.0/33\n');
    expect(problem).toMatch(/^12: .*"10\.0\.0\.0\/33" has prefix length "33"; expected 0-32/);
    expect(problems('    with: { baseline: ["office"] }\n')[0]).toContain(
      '"office" is not an IPv4 or IPv6 address',
    );
  });

  it('refuses a prefix length the family cannot have', () => {
    expect(problems('    with: { maxPrefix: 33 }\n')).toHaveLength(1);
    expect(problems('    with: { maxPrefix: { ipv6: 129 } }\n')).toHaveLength(1);
    expect(problems('    with: { maxPrefix: { ipv4: 8, ipv6: 32 } }\n')).toEqual([]);
  });
});
