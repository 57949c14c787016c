import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { MemoryCheckpointStore } from '../../../src/engine/index.js';
import { PolicyError, parsePolicy } from '../../../src/policy/index.js';
import type { SimState } from '../../../src/sim/index.js';
import { type ActionRun, mutatingCalls, useActionSim } from '../../helpers/actions.js';
import { COMPONENTS, providerOf, providerPath, providerState } from './cloud-provider-fixtures.js';

const policy = (withBlock: string, target = 'target: { workgroups: ["prod-core"] }') => `version: 1
jobs:
  upgrade:
    schedule: "0 3 * * 6"
    action: upgrade-cloud-provider
    ${target}
    confirm: true
    retry: { attempts: 3, backoff: 1s, strategy: fixed }
    with:
      pollInterval: 1s
      waitReady: 1m
${withBlock}`;

const UPGRADE = `      components: { engine: "4.2.0", gateway: "1.9.2" }
      nodeGroups: { ng_16: { max_size: 6 }, ng_system: { min_size: 1 } }
      logTypes: [api, audit]
`;

type UpgradeRequest = Extract<SimState['transitions'][number], { kind: 'upgrade' }>['request'];

/** A state in which prod-core's provider is Upgrading (the given request) for another `ms`. */
function upgradingState(request: UpgradeRequest, ms: number) {
  return providerState(3, (state) => {
    const cp = providerOf(state, 'prod-core');
    cp.status = 'Upgrading';
    const now = Date.now();
    state.transitions.push({
      kind: 'upgrade',
      cloud_provider_id: cp.id,
      request,
      id: 'tr-test',
      started_at: new Date(now).toISOString(),
      completes_at: new Date(now + ms).toISOString(),
    });
  });
}

describe('upgrade-cloud-provider against the simulator', () => {
  const harness = useActionSim(() => providerState(3), { proxy: true });

  const provider = () => providerOf(harness.sim.state, 'prod-core');
  const upgradeCalls = (run: ActionRun) =>
    run.requests.filter((r) => r.operation === 'upgradeCloudProvider').map((r) => r.status);

  it('sends only what differs, waits until the provider is Active again and reports before and after', async () => {
    const run = await harness.run(policy(UPGRADE), 'upgrade');
    expect(run.summary.outcome).toBe('succeeded');
    const id = provider().id;
    const target = run.summary.targets[0];
    expect(target).toMatchObject({ key: id, outcome: 'succeeded', attempts: 1 });
    expect(target?.detail?.requested).toEqual({
      components: [{ name: 'engine', version: '4.2.0' }],
      node_group_config: { ng_16: { max_size: 6 } },
      cluster_enabled_log_types: ['api', 'audit'],
    });
    expect(target?.detail).toMatchObject({
      before: { components: COMPONENTS, nodeGroups: { ng_16: { max_size: 4 } }, logTypes: ['api'] },
      after: {
        status: 'Active',
        components: { ...COMPONENTS, engine: '4.2.0' },
        nodeGroups: { ng_16: { min_size: 0, max_size: 6, overprovisioning_factor: 1 } },
        logTypes: ['api', 'audit'],
        lastError: null,
      },
    });
    expect(target?.detail?.timeToReadyMs).toBeGreaterThan(0);
    expect(run.summary.evidence?.upgrades).toEqual({
      [id]: expect.objectContaining({ name: 'prod-core-byoc', passed: true, before: target?.detail?.before }),
    });
    expect(JSON.parse(provider().component_versions ?? '{}')).toEqual({ ...COMPONENTS, engine: '4.2.0' });
    expect(provider().status).toBe('Active');
    expect(mutatingCalls(run)).toEqual(['upgradeCloudProvider']);
  });

  it('skips a provider already at the requested versions, sizes and log types without calling the upgrade', async () => {
    const run = await harness.run(
      policy(`      components: [{ name: engine, version: "4.1.3" }]
      nodeGroups: { ng_16: { max_size: 4, min_size: 0 } }
      logTypes: [api]
`),
      'upgrade',
    );
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'skipped',
      reason: 'already at the requested versions',
    });
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('waits for an upgrade already under way instead of sending another, and skips when it brought the request', async () => {
    harness.sim.reset({
      state: upgradingState({ components: [{ name: 'engine', version: '4.2.0' }] }, 1500),
    });
    const run = await harness.run(policy('      components: { engine: "4.2.0" }\n'), 'upgrade');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'skipped',
      reason: 'already at the requested versions (after waiting for an upgrade already under way)',
      detail: { before: { status: 'Upgrading' }, after: { status: 'Active' } },
    });
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('taken over after its upgrade was sent, waits for that upgrade and reports it as its own, without sending another', async () => {
    const requested = { components: [{ name: 'engine', version: '4.2.0' }] };
    harness.sim.reset({ state: upgradingState(requested, 1500) });
    // the progress record a worker that died after sending the upgrade left in the run's checkpoint
    const checkpoints = new MemoryCheckpointStore();
    const sentAt = Date.now() - 5_000;
    await checkpoints.saveProgress('upgrade@test', provider().id, {
      before: { status: 'Active', components: COMPONENTS },
      sentAt,
      requested,
      foundUnderWay: false,
    });
    const run = await harness.run(policy('      components: { engine: "4.2.0" }\n'), 'upgrade', {
      checkpoints,
    });
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'succeeded',
      detail: { requested, before: { status: 'Active' }, after: { status: 'Active' } },
    });
    expect(run.summary.targets[0]?.reason).toBeUndefined();
    // time to ready counts from the upgrade the first worker sent
    expect(run.summary.targets[0]?.detail?.timeToReadyMs).toBeGreaterThanOrEqual(5_000);
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('after an upgrade under way ends without the request, sends its own', async () => {
    harness.sim.reset({ state: upgradingState({ cluster_enabled_log_types: ['api', 'scheduler'] }, 1500) });
    const run = await harness.run(policy('      components: { engine: "4.2.0" }\n'), 'upgrade');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'succeeded',
      reason: 'upgraded after an upgrade already under way ended',
    });
    expect(upgradeCalls(run)).toEqual([200]);
    expect(provider().cluster_enabled_log_types).toEqual(['api', 'scheduler']);
    expect(JSON.parse(provider().component_versions ?? '{}')).toMatchObject({ engine: '4.2.0' });
  });

  it('fails an upgrade the API refuses for good after one attempt', async () => {
    // min_size 5 above the group's max_size 4: refused after the simulator merges the sizes
    const run = await harness.run(policy('      nodeGroups: { ng_16: { min_size: 5 } }\n'), 'upgrade');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { type: 'Bad-Request', status: 400, retryable: false },
    });
    expect(upgradeCalls(run)).toEqual([400]);
    expect(provider().node_group_config?.ng_16?.min_size).toBe(0);
  });

  describe('a rollout that fails', () => {
    const rollout = (extra: string) => `version: 1
jobs:
  upgrade:
    schedule: "0 3 * * 6"
    action: upgrade-cloud-provider
    target: { workgroups: ["prod-core", "staging-eu"] }
    confirm: true
    concurrency: 1
    retry: { attempts: 1 }
${extra}    with:
      nodeGroups: { ng_16: { min_size: 5 } }
`;

    it('stops after its first failed provider by default: the next is never upgraded, and the run ends halted naming the failure', async () => {
      const run = await harness.run(rollout(''), 'upgrade');
      expect(upgradeCalls(run)).toEqual([400]);
      expect(run.summary.outcome).toBe('halted');
      expect(run.summary.counts).toMatchObject({ total: 1, failed: 1 });
      expect(run.summary.reason).toMatch(
        /^halted: 1 of 1 finished targets failed \(stopAfter: 1 failure\): [\w-]+: .*min_size/,
      );
    });

    it("goes on as far as the job's own stopAfter allows", async () => {
      const run = await harness.run(rollout('    stopAfter: { failures: 2 }\n'), 'upgrade');
      expect(upgradeCalls(run)).toEqual([400, 400]);
      // the budget ran out with the last provider: nothing was left unstarted, so the run failed, not halted
      expect(run.summary.outcome).toBe('failed');
      expect(run.summary.counts).toMatchObject({ total: 2, failed: 2 });
    });
  });

  it('retries a transient server error on the upgrade and applies it once', async () => {
    const before = provider().version_number;
    // seed 33: the first affected request fails, the next ones pass
    harness.sim.setFaults({ errorRate: 0.5, seed: 33, operations: ['upgradeCloudProvider'] });
    const run = await harness.run(policy(UPGRADE), 'upgrade');
    expect(upgradeCalls(run)).toEqual([500, 200]);
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    // one upgrade: Upgrading, then Active
    expect(provider().version_number).toBe(before + 2);
  });

  it('after a lost answer, re-reads on the retry and does not send the upgrade again', async () => {
    const path = providerPath(provider().id, '/upgrade');
    harness.proxy.refuse({
      method: 'PUT',
      path,
      status: 500,
      type: 'Internal-Error',
      forwardFirst: true,
      times: 1,
    });
    const before = provider().version_number;
    const run = await harness.run(policy(UPGRADE), 'upgrade');
    expect(harness.proxy.calls.filter((c) => c.path === path)).toHaveLength(1);
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(run.summary.targets[0]?.detail).toMatchObject({
      before: { logTypes: ['api'] },
      after: { logTypes: ['api', 'audit'] },
    });
    expect(provider().version_number).toBe(before + 2);
  });

  it('fails a provider that ends its upgrade with last_error set, recording it in the evidence', async () => {
    harness.sim.reset({
      state: providerState(3, (state) => {
        providerOf(state, 'prod-core').last_error = 'helm release timed out';
      }),
    });
    const run = await harness.run(policy('      components: { engine: "4.2.0" }\n'), 'upgrade');
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: {
        message: 'cloud provider prod-core-byoc ended the upgrade with last_error: helm release timed out',
      },
    });
    expect(run.summary.evidence?.upgrades).toEqual({
      [provider().id]: expect.objectContaining({
        passed: false,
        after: expect.objectContaining({ lastError: 'helm release timed out' }),
      }),
    });
  });

  it('upgrades each provider once for workgroups sharing it and for ids also given', async () => {
    harness.sim.reset({
      state: providerState(3, (state) => {
        const devAlpha = state.workgroups.find((wg) => wg.name === 'dev-alpha');
        if (devAlpha) devAlpha.cloud_provider_id = providerOf(state, 'prod-core').id;
      }),
    });
    const staging = providerOf(harness.sim.state, 'staging-eu').id;
    const run = await harness.run(
      policy(
        `      cloudProviderIds: ["${provider().id}", "${staging}"]\n      logTypes: [audit]\n`,
        'target: { workgroups: ["prod-core", "dev-alpha"] }',
      ),
      'upgrade',
    );
    expect(run.summary.targets.map((t) => t.key).sort()).toEqual([provider().id, staging].sort());
    expect(upgradeCalls(run)).toEqual([200, 200]);
  });

  it('a dry run plans the changes with read-only calls and upgrades nothing', async () => {
    const run = await harness.run(policy(UPGRADE), 'upgrade', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.targets[0]).toMatchObject({
      outcome: 'planned',
      reason: 'would upgrade: engine 4.1.3 → 4.2.0; ng_16.max_size 4 → 6; log types [api] → [api, audit]',
    });
    expect(provider().status).toBe('Active');
  });
});

describe('upgrade-cloud-provider with a slow provider', () => {
  const harness = useActionSim(() => providerState(1), { transitionMs: 60_000 });

  it('fails the provider when it is not Active again within waitReady, without retrying', async () => {
    const run = await harness.run(
      policy('      components: { engine: "4.2.0" }\n').replace('waitReady: 1m', 'waitReady: 2s'),
      'upgrade',
    );
    expect(run.summary.targets[0]).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(run.summary.targets[0]?.error?.message).toMatch(
      /^cloud provider prod-core-byoc not Active within 2s: still Upgrading when the wait ran out$/,
    );
    expect(run.requests.filter((r) => r.operation === 'upgradeCloudProvider')).toHaveLength(1);
  });
});

describe('upgrade-cloud-provider with a provider whose upgrades finish at once', () => {
  const harness = useActionSim(() => providerState(3), { proxy: true, transitionMs: 0 });
  const provider = () => providerOf(harness.sim.state, 'prod-core');

  it('a refused upgrade whose request is in place when re-read is skipped as already there, not failed', async () => {
    const path = providerPath(provider().id, '/upgrade');
    // the upgrade goes through and is over before the answer, which says Bad-Request
    harness.proxy.refuse({
      method: 'PUT',
      path,
      status: 400,
      type: 'Bad-Request',
      forwardFirst: true,
      answerWhen: () => harness.sim.state.transitions.length === 0,
    });
    const run = await harness.run(policy(UPGRADE), 'upgrade');

    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets[0]).toMatchObject({
      key: provider().id,
      outcome: 'skipped',
      attempts: 1,
      reason: 'already at the requested versions (in place when the API refused the upgrade)',
      detail: {
        before: { logTypes: ['api'], components: COMPONENTS },
        after: {
          status: 'Active',
          logTypes: ['api', 'audit'],
          components: { ...COMPONENTS, engine: '4.2.0' },
        },
      },
    });
    expect(harness.proxy.calls.filter((c) => c.path === path)).toHaveLength(1);
    // the read before the upgrade, then the re-read after the refusal
    expect(run.requests.filter((r) => r.operation === 'getCloudProvider')).toHaveLength(2);
  });

  it('a refused upgrade that the re-read shows not in place fails after one attempt with the API error', async () => {
    const path = providerPath(provider().id, '/upgrade');
    harness.proxy.refuse({ method: 'PUT', path, status: 400, type: 'Bad-Request' });
    const run = await harness.run(policy(UPGRADE), 'upgrade');

    expect(run.summary.outcome).toBe('failed');
    const target = run.summary.targets[0];
    expect(target).toMatchObject({
      outcome: 'failed',
      attempts: 1,
      error: { status: 400, type: 'Bad-Request', retryable: false },
    });
    expect(target?.error?.message).toContain(
      `upgradeCloudProvider PUT ${path} → 400 Bad-Request (RequestID ${target?.error?.requestId})`,
    );
    expect(run.requests.filter((r) => r.operation === 'getCloudProvider')).toHaveLength(2);
    expect(provider().cluster_enabled_log_types).toEqual(['api']);
  });
});

describe('upgrade-cloud-provider in a policy', () => {
  const load = (text: string) => () => parsePolicy(text, 'up.yaml', { registry: actionRegistry, env: {} });

  it('is destructive: refused without confirm: true', () => {
    expect(load(policy(UPGRADE).replace('    confirm: true\n', ''))).toThrow(
      /action "upgrade-cloud-provider" is destructive: add "confirm: true" to the job/,
    );
  });

  it('refuses a job that asks for nothing to upgrade', () => {
    expect(load(policy(''))).toThrow(/give components, nodeGroups or logTypes: there is nothing to upgrade/);
  });

  it('refuses a node group whose min_size exceeds its max_size', () => {
    expect(load(policy('      nodeGroups: { ng_32: { min_size: 3, max_size: 2 } }\n'))).toThrow(PolicyError);
    expect(load(policy('      nodeGroups: { ng_32: { min_size: 3, max_size: 2 } }\n'))).toThrow(
      /min_size exceeds max_size/,
    );
  });
});
