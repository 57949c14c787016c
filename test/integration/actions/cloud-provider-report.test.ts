import { describe, expect, it } from 'vitest';
import type { SimState } from '../../../src/sim/index.js';
import { mutatingCalls, useActionSim } from '../../helpers/actions.js';
import { COMPONENTS, providerOf, providerState } from './cloud-provider-fixtures.js';

const policy = (lines: string) => `version: 1
jobs:
  report:
    schedule: "0 7 * * *"
    action: cloud-provider-report
    retry: { attempts: 3, backoff: 1s, strategy: fixed }
    concurrency: 1
${lines}`;

const allWorkgroups = '    target: { workgroups: ["*"] }\n';

/** dev-alpha shares prod-core's provider; staging-eu and ops keep their own. */
function sharedState(change: (state: SimState) => void = () => {}): SimState {
  return providerState(4, (state) => {
    const devAlpha = state.workgroups.find((wg) => wg.name === 'dev-alpha');
    if (devAlpha) devAlpha.cloud_provider_id = providerOf(state, 'prod-core').id;
    change(state);
  });
}

describe('cloud-provider-report against the simulator', () => {
  const harness = useActionSim(sharedState);

  const id = (workgroup: string) => providerOf(harness.sim.state, workgroup).id;

  it('reports each provider once, however many target workgroups share it, with its facts', async () => {
    const run = await harness.run(policy(allWorkgroups), 'report');
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets.map((t) => t.key).sort()).toEqual(
      [id('prod-core'), id('staging-eu'), id('ops')].sort(),
    );
    expect(run.requests.filter((r) => r.operation === 'getCloudProvider')).toHaveLength(3);
    const shared = run.summary.targets.find((t) => t.key === id('prod-core'));
    expect(shared?.detail).toMatchObject({
      name: 'prod-core-byoc',
      status: 'Active',
      version: '1.4.2',
      components: COMPONENTS,
      nodeGroups: { ng_16: { min_size: 0, max_size: 4, overprovisioning_factor: 1 } },
      logTypes: ['api'],
      lastError: null,
      workgroups: ['prod-core', 'dev-alpha'],
    });
    expect(JSON.stringify(run.summary.targets)).not.toMatch(/tok_|role_external_id|ext-/);
    expect(run.summary.findings).toEqual([]);
  });

  it('flags a provider with last_error set, or in a failure status, as cloud-provider/error', async () => {
    harness.sim.reset({
      state: sharedState((state) => {
        providerOf(state, 'staging-eu').last_error = 'node group ng_16 failed to scale: quota';
        providerOf(state, 'ops').status = 'UpgradeFailed';
      }),
    });
    const run = await harness.run(policy(allWorkgroups), 'report');
    expect(run.summary.findings).toEqual([
      expect.objectContaining({
        rule: 'cloud-provider/error',
        severity: 'critical',
        subject: 'staging-eu-byoc',
        message: 'status Active; last error: node group ng_16 failed to scale: quota',
      }),
      expect.objectContaining({
        rule: 'cloud-provider/error',
        subject: 'ops-byoc',
        message: 'status UpgradeFailed',
      }),
    ]);
    expect(run.summary.outcome).toBe('succeeded');
  });

  it('flags version and component drift against expectVersion and expectComponents', async () => {
    harness.sim.reset({
      state: sharedState((state) => {
        providerOf(state, 'prod-core').version = '1.5.0';
        providerOf(state, 'ops').version = '1.5.0';
        providerOf(state, 'ops').component_versions = JSON.stringify({ ...COMPONENTS, engine: '4.2.0' });
      }),
    });
    const run = await harness.run(
      policy(
        `${allWorkgroups}    with: { expectVersion: "1.5.0", expectComponents: { engine: "4.2.0", scheduler: "1.0.0" } }\n`,
      ),
      'report',
    );
    const drift = run.summary.findings.map((f) => `${f.rule} ${f.subject}: ${f.message}`).sort();
    expect(drift).toEqual([
      'cloud-provider/version-drift ops-byoc scheduler: runs scheduler (not installed); expected 1.0.0',
      'cloud-provider/version-drift prod-core-byoc engine: runs engine 4.1.3; expected 4.2.0',
      'cloud-provider/version-drift prod-core-byoc scheduler: runs scheduler (not installed); expected 1.0.0',
      'cloud-provider/version-drift staging-eu-byoc engine: runs engine 4.1.3; expected 4.2.0',
      'cloud-provider/version-drift staging-eu-byoc scheduler: runs scheduler (not installed); expected 1.0.0',
      'cloud-provider/version-drift staging-eu-byoc version: records version 1.4.2; expected 1.5.0',
    ]);
  });

  it('reports the providers named in cloudProviderIds without a target, and dedupes one also targeted', async () => {
    const alone = await harness.run(policy(`    with: { cloudProviderIds: ["${id('ops')}"] }\n`), 'report');
    expect(alone.summary.targets.map((t) => t.key)).toEqual([id('ops')]);

    const both = await harness.run(
      policy(
        `    target: { workgroups: ["ops"] }\n    with: { cloudProviderIds: ["${id('ops')}", "${id('staging-eu')}"] }\n`,
      ),
      'report',
    );
    expect(both.summary.targets.map((t) => t.key).sort()).toEqual([id('ops'), id('staging-eu')].sort());
  });

  it('fails a job that names no provider at all, saying so', async () => {
    const run = await harness.run(policy(''), 'report');
    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.reason).toMatch(/no cloud provider to act on.*cloudProviderIds/);
  });

  it('fails an unknown provider id after one attempt (a 404 is permanent) and reports the others', async () => {
    const run = await harness.run(
      policy(`    with: { cloudProviderIds: ["cp-00000000", "${id('ops')}"] }\n`),
      'report',
    );
    expect(run.summary.outcome).toBe('partial');
    expect(run.summary.targets.find((t) => t.key === 'cp-00000000')).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { type: 'Not-Found', status: 404, retryable: false },
    });
    expect(run.requests.filter((r) => r.path.endsWith('cp-00000000'))).toHaveLength(1);
  });

  it('retries a transient server error on getCloudProvider until the read goes through', async () => {
    // seed 33: the first affected request fails, the next ones pass
    harness.sim.setFaults({ errorRate: 0.5, seed: 33, operations: ['getCloudProvider'] });
    const run = await harness.run(policy(`    with: { cloudProviderIds: ["${id('ops')}"] }\n`), 'report');
    expect(run.requests.filter((r) => r.operation === 'getCloudProvider').map((r) => r.status)).toEqual([
      500, 200,
    ]);
    expect(run.summary.targets).toEqual([
      expect.objectContaining({ key: id('ops'), outcome: 'succeeded', attempts: 2 }),
    ]);
  });

  it('a dry run makes the same read-only calls and reports the same findings, as planned targets', async () => {
    harness.sim.reset({
      state: sharedState((state) => {
        providerOf(state, 'ops').last_error = 'boom';
      }),
    });
    const job = policy(`${allWorkgroups}    with: { expectVersion: "1.4.2" }\n`);
    const dry = await harness.run(job, 'report', { dryRun: true });
    expect(mutatingCalls(dry)).toEqual([]);
    expect(dry.summary.counts).toMatchObject({ total: 3, planned: 3 });
    const real = await harness.run(job, 'report');
    expect(dry.summary.findings).toEqual(real.summary.findings);
    expect(real.summary.findings.map((f) => f.subject)).toEqual(['ops-byoc']);
  });
});
