// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import { actionRegistry } from '../../../jobs/index.js';
import type { RunSummary } from '../../../src/engine/index.js';
import { MemoryCheckpointStore } from '../../../src/engine/index.js';
import { Notifier, RedisNotificationMemory, type RunPayload } from '../../../src/notify/index.js';
import { PolicyError, parsePolicy } from '../../../src/policy/index.js';
import { mutatingCalls, useActionSim, workgroupNamed } from '../../helpers/actions.js';
import { assertBuilt, eventually, startCli, useEngineHarness } from '../../helpers/engine.js';
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
      forbid: ["0.0.0.0/0", "::/0"]
      forbidOverlap: ["10.0.0.0/8"]
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
        'allow-list/forbidden-overlap prod-core 0.0.0.0/0',
        'allow-list/too-wide prod-core 0.0.0.0/0',
        'allow-list/no-note prod-core 0.0.0.0/0',
        'allow-list/unexpected prod-core 0.0.0.0/0',
        'allow-list/forbidden-overlap prod-core 10.1.2.0/24',
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
      'prod-core': { entries: 5, findings: 10, enforced: true },
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

  it('forbid ["0.0.0.0/0", "::/0"] flags only the entries open to the whole internet, not every entry of a family', async () => {
    const run = await harness.run(
      policy(`    with:
      forbid: ["0.0.0.0/0", "::/0"]
      requireNote: false
      requireEnabled: false
      checkRunnerIp: false
`),
      'audit',
    );
    expect(found(run.summary)).toEqual(['allow-list/forbidden-cidr prod-core 0.0.0.0/0']);
    expect(run.summary.findings[0]).toMatchObject({
      severity: 'critical',
      message: 'admits every address of forbidden range 0.0.0.0/0',
    });
  });

  it('failOn: critical fails a run whose findings reach it, once every workgroup is audited, and says why', async () => {
    const run = await harness.run(policy(`${RULES}      failOn: critical\n`), 'audit');
    expect(run.summary).toMatchObject({
      outcome: 'failed',
      reason: '4 findings reach failOn: critical (4 critical)',
      counts: { total: 3, succeeded: 3, failed: 0 },
    });
    expect(run.summary.findings).toHaveLength(16);
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('a run taken over after its worker died judges failOn on the findings of workgroups the dead worker audited too', async () => {
    const first = await harness.run(policy(`${RULES}      failOn: critical\n`), 'audit');
    const prodCore = first.summary.targets.find((t) => t.workgroupName === 'prod-core');
    if (!prodCore) throw new Error('no prod-core target');
    const critical = first.summary.findings.filter(
      (f) => f.subject.startsWith('prod-core') && f.severity === 'critical',
    );
    expect(critical.length).toBeGreaterThan(0);
    // an earlier delivery audited prod-core (its critical findings kept with its checkpoint) and died
    const checkpoints = new MemoryCheckpointStore();
    await checkpoints.save('audit@test', { ...prodCore, findings: critical });
    const resumed = await harness.run(policy(`${RULES}      failOn: critical\n`), 'audit', { checkpoints });
    expect(resumed.requests.filter((r) => r.path.includes(`/${prodCore.workgroupId}/`))).toEqual([]);
    expect(resumed.summary.outcome).toBe('failed');
    // every critical finding counts, the checkpointed workgroup's too
    expect(resumed.summary.reason).toBe(first.summary.reason);
  });

  it('judges failOn by the severities the policy sets, and a run below failOn succeeds as before', async () => {
    const lowered = await harness.run(
      policy(`${RULES}      severity: { forbidden-overlap: warning, disabled: warning, no-note: critical }
      failOn: critical
`),
      'audit',
    );
    expect(lowered.summary.outcome).toBe('failed');
    expect(lowered.summary.reason).toBe('3 findings reach failOn: critical (3 critical)');
    expect(
      lowered.summary.findings.filter((f) => f.severity === 'critical').map((f) => `${f.rule} ${f.subject}`),
    ).toEqual(
      expect.arrayContaining([
        'allow-list/forbidden-cidr prod-core 0.0.0.0/0',
        'allow-list/no-note prod-core 0.0.0.0/0',
        'allow-list/no-note prod-core 198.51.100.7',
      ]),
    );
    // no-note is info and runner-blocked a warning by default: below failOn critical
    const below = await harness.run(
      policy('    with: { requireEnabled: false, failOn: critical }\n'),
      'audit',
    );
    expect(found(below.summary)).toEqual(
      [
        'allow-list/no-note prod-core 0.0.0.0/0',
        'allow-list/no-note prod-core 198.51.100.7',
        'allow-list/runner-blocked staging-eu',
      ].sort(),
    );
    expect(below.summary.outcome).toBe('succeeded');
    expect(below.summary.reason).toBeUndefined();
  });

  it('a dry run judges failOn as the run would, so a plan shows the run would fail', async () => {
    const dry = await harness.run(policy(`${RULES}      failOn: warning\n`), 'audit', { dryRun: true });
    expect(dry.summary).toMatchObject({
      outcome: 'failed',
      reason: '14 findings reach failOn: warning (4 critical, 10 warning)',
      counts: { total: 3, planned: 3 },
    });
    expect(mutatingCalls(dry)).toEqual([]);
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

/** The same audit twice: `gate` fails its run on a critical finding, `report` only reports. */
const QUEUED = `version: 1
notifications:
  security: { url: "\${SECURITY_WEBHOOK}", on: [failure, findings] }
jobs:
  gate:
    schedule: "0 6 * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
    notify: [security]
${RULES}      failOn: critical
  report:
    schedule: "0 6 * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
    notify: [security]
${RULES}`;

describe('allow-list-audit queued through a worker that notifies', () => {
  const harness = useEngineHarness(
    { workgroups: MIXED.length, workspacesPerWorkgroup: 1 },
    { state: allowListState(MIXED) },
  );
  let receiver: ScriptedServer;
  beforeAll(async () => {
    receiver = await startScriptedServer();
    receiver.replyJson(200, { ok: true });
  });
  afterAll(() => receiver.close());

  /** Starts a notifying worker, runs `job` with `nightshift run` and returns its exit code, summary and notification. */
  async function runQueued(job: string) {
    assertBuilt();
    const engine = harness.engine(`audit-${job}`);
    const webhook = `${receiver.url}/hooks/${job}`;
    const notifier = new Notifier({
      memory: new RedisNotificationMemory(engine.redis, { prefix: engine.prefix }),
      log: engine.log,
    });
    try {
      engine.worker(harness.sim.url, { notifier, env: { SECURITY_WEBHOOK: webhook } });
      const file = join(mkdtempSync(join(tmpdir(), 'nightshift-audit-')), 'policy.yaml');
      writeFileSync(file, QUEUED);
      const cli = startCli(['run', file, job, '--json', '--quiet'], {
        REDIS_URL: harness.server.url,
        NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
        NIGHTSHIFT_LOG_LEVEL: 'warn',
        SECURITY_WEBHOOK: webhook,
      });
      let stdout = '';
      cli.child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      const code = await cli.exited;
      const sent = await eventually(`the ${job} notification`, () =>
        receiver.requests.find((request) => request.url === `/hooks/${job}`),
      );
      return {
        code,
        output: cli.output(),
        summary: JSON.parse(stdout) as RunSummary,
        payload: JSON.parse(sent.body) as RunPayload,
      };
    } finally {
      await notifier.close();
    }
  }

  it('failOn: critical fails the run, the failure notification says why, and `nightshift run` exits 1', async () => {
    const { code, output, summary, payload } = await runQueued('gate');
    expect(code, output).toBe(1);
    const reason = '4 findings reach failOn: critical (4 critical)';
    expect(summary).toMatchObject({ outcome: 'failed', reason, counts: { total: 3, succeeded: 3 } });
    expect(payload).toMatchObject({
      events: ['failure', 'findings'],
      job: 'gate',
      outcome: 'failed',
      reason,
      findings: { open: 16, new: 16 },
    });
  });

  it('without failOn the same findings leave the run succeeded: exit 3 and a findings notification only', async () => {
    const { code, output, summary, payload } = await runQueued('report');
    expect(code, output).toBe(3);
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { total: 3, succeeded: 3 } });
    expect(summary.findings).toHaveLength(16);
    expect(payload).toMatchObject({
      events: ['findings'],
      job: 'report',
      outcome: 'succeeded',
      reason: null,
    });
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

  it('refuses a forbidOverlap range that is not a CIDR, at its line', () => {
    expect(problems('    with:\n      forbidOverlap: ["10.0.0.0/8", "10.0.0.0/40"]\n')).toEqual([
      '10: jobs.audit.with.forbidOverlap[1]: "10.0.0.0/40" has prefix length "40"; expected 0-32',
    ]);
  });

  it('refuses a severity for a rule the audit does not have, or a severity the product does not have', () => {
    expect(problems('    with:\n      severity:\n        too_wide: critical\n')).toEqual([
      '11: jobs.audit.with.severity: unknown key "too_wide"; did you mean "too-wide"?',
    ]);
    expect(problems('    with:\n      severity: { no-note: high }\n')).toEqual([
      '10: jobs.audit.with.severity.no-note: expected one of: info, warning, critical',
    ]);
    // the issue asked for `failOn: error`: the product's severities say `critical`
    expect(problems('    with: { failOn: error }\n')).toEqual([
      '9: jobs.audit.with.failOn: expected one of: info, warning, critical',
    ]);
    expect(problems('    with: { failOn: warning, severity: { runner-blocked: critical } }\n')).toEqual([]);
  });

  it('refuses a prefix length the family cannot have', () => {
    expect(problems('    with: { maxPrefix: 33 }\n')).toHaveLength(1);
    expect(problems('    with: { maxPrefix: { ipv6: 129 } }\n')).toHaveLength(1);
    expect(problems('    with: { maxPrefix: { ipv4: 8, ipv6: 32 } }\n')).toEqual([]);
  });
});
