import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { PolicyError, parsePolicy } from '../../../src/policy/index.js';
import { mutatingCalls, useActionSim } from '../../helpers/actions.js';
import { providerOf, providerPath, providerState } from './cloud-provider-fixtures.js';

const policy = (withLine: string) => `version: 1
jobs:
  update:
    schedule: "0 6 * * 1"
    action: update-cloud-provider
    retry: { attempts: 3, backoff: 1s, strategy: fixed }
    with: ${withLine}
`;

const RENAME = '{ cloudProvider: prod-core-byoc, name: prod-core-byoc-eu, version: "1.5.0" }';

describe('update-cloud-provider against the simulator', () => {
  const harness = useActionSim(() => providerState(3), { proxy: true });

  const provider = (workgroup: string) => providerOf(harness.sim.state, workgroup);

  it('renames a provider named by its name and records a version against it', async () => {
    const before = provider('prod-core').version_number;
    const run = await harness.run(policy(RENAME), 'update');
    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets).toEqual([
      expect.objectContaining({
        key: provider('prod-core').id,
        outcome: 'succeeded',
        reason: 'renamed "prod-core-byoc" to "prod-core-byoc-eu" and recorded version 1.5.0 (was 1.4.2)',
        detail: {
          before: { name: 'prod-core-byoc', version: '1.4.2' },
          after: { name: 'prod-core-byoc-eu', version: '1.5.0' },
        },
      }),
    ]);
    expect(provider('prod-core')).toMatchObject({ name: 'prod-core-byoc-eu', version: '1.5.0' });
    expect(provider('prod-core').version_number).toBe(before + 1);
    expect(mutatingCalls(run)).toEqual(['updateCloudProvider']);
  });

  it('run again with the old name, finds the rename made and changes nothing', async () => {
    await harness.run(policy(RENAME), 'update');
    const again = await harness.run(policy(RENAME), 'update');
    expect(again.summary.targets).toEqual([
      expect.objectContaining({
        key: provider('prod-core').id,
        outcome: 'skipped',
        reason: 'already named "prod-core-byoc-eu" and at version 1.5.0',
      }),
    ]);
    expect(mutatingCalls(again)).toEqual([]);
  });

  it('records only a version for a provider given by id, keeping its name', async () => {
    const id = provider('staging-eu').id;
    const run = await harness.run(policy(`{ cloudProvider: ${id}, version: "1.5.0" }`), 'update');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'succeeded',
      reason: 'recorded version 1.5.0 (was 1.4.2)',
    });
    expect(provider('staging-eu')).toMatchObject({ name: 'staging-eu-byoc', version: '1.5.0' });
  });

  it('skips a provider already at the version, without calling the update', async () => {
    const run = await harness.run(policy('{ cloudProvider: dev-alpha-byoc, version: "1.4.2" }'), 'update');
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'skipped', reason: 'already at version 1.4.2' });
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('fails a provider that is neither a listed name nor an id the API knows, naming the known ones', async () => {
    const run = await harness.run(policy('{ cloudProvider: prod-core-bycc, name: x }'), 'update');
    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.targets[0]?.attempts).toBe(1);
    expect(run.summary.targets[0]?.error?.message).toMatch(
      /^no cloud provider "prod-core-bycc": .*known: prod-core-byoc \(cp-[0-9a-f]+\), dev-alpha-byoc/,
    );
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('refuses a name two providers share, before any call', async () => {
    harness.sim.reset({
      state: providerState(3, (state) => {
        providerOf(state, 'dev-alpha').name = 'prod-core-byoc';
      }),
    });
    const run = await harness.run(policy('{ cloudProvider: prod-core-byoc, version: "2.0.0" }'), 'update');
    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.reason).toMatch(
      /cloud provider "prod-core-byoc" is ambiguous: 2 share that name .*give the id/,
    );
    expect(run.requests.map((r) => r.operation)).toEqual(['listWorkgroups']);
  });

  it('fails an update the API refuses for good after one attempt, leaving the provider as it was', async () => {
    const run = await harness.run(
      policy(`{ cloudProvider: staging-eu-byoc, name: "${'n'.repeat(129)}" }`),
      'update',
    );
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { type: 'Bad-Request', status: 400, retryable: false },
    });
    expect(run.requests.filter((r) => r.operation === 'updateCloudProvider')).toHaveLength(1);
    expect(provider('staging-eu').name).toBe('staging-eu-byoc');
  });

  it('treats a refusal as done when the re-read shows the update made', async () => {
    const id = provider('staging-eu').id;
    harness.proxy.refuse({
      method: 'PUT',
      path: providerPath(id),
      status: 400,
      type: 'Bad-Request',
      forwardFirst: true,
    });
    const run = await harness.run(policy('{ cloudProvider: staging-eu-byoc, version: "1.5.0" }'), 'update');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'skipped',
      reason: 'already at version 1.5.0',
      attempts: 1,
    });
    expect(harness.proxy.calls.filter((c) => c.method === 'PUT')).toHaveLength(1);
  });

  it('retries a transient server error and applies the update once', async () => {
    const before = provider('prod-core').version_number;
    // seed 33: the first affected request fails, the next ones pass
    harness.sim.setFaults({ errorRate: 0.5, seed: 33, operations: ['updateCloudProvider'] });
    const run = await harness.run(policy(RENAME), 'update');
    expect(run.requests.filter((r) => r.operation === 'updateCloudProvider').map((r) => r.status)).toEqual([
      500, 200,
    ]);
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(provider('prod-core').version_number).toBe(before + 1);
  });

  it('a dry run plans the update with read-only calls and changes nothing', async () => {
    const run = await harness.run(policy(RENAME), 'update', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'planned',
      reason:
        'would rename "prod-core-byoc" to "prod-core-byoc-eu" and would record version 1.5.0 (now 1.4.2)',
    });
    expect(provider('prod-core').name).toBe('prod-core-byoc');
  });
});

describe('update-cloud-provider in a policy', () => {
  it('refuses a job that gives neither a name nor a version', () => {
    const load = () =>
      parsePolicy(policy('{ cloudProvider: ops-byoc }'), 'u.yaml', { registry: actionRegistry, env: {} });
    expect(load).toThrow(PolicyError);
    expect(load).toThrow(/give a name, a version or both: there is nothing to update/);
  });
});
