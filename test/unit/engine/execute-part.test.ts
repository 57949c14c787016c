import { describe, expect, it } from 'vitest';
import type { ApiClient, Workgroup } from '../../../src/api/index.js';
import {
  type Action,
  executePart,
  executeRun,
  type FleetListing,
  type FleetListingSink,
  MemoryCheckpointStore,
  type RunDependencies,
  trimListing,
  workspaceRef,
} from '../../../src/engine/index.js';
import { silentLogger } from '../../../src/log/logger.js';
import { createActionCatalog, parsePolicy } from '../../../src/policy/index.js';
import { activeWorkgroup } from '../../helpers/active-workgroup.js';
import { FakeClock } from '../../helpers/clock.js';
import { testAction } from '../../helpers/test-action.js';

/**
 * executeRun and executePart share their phases (list, select, build the context, act,
 * summarize) and differ in which targets they work and how they act; both on in-memory ports.
 */
const WORKSPACES = ['ws-1', 'ws-2', 'ws-3'];

const fleet: Workgroup[] = [activeWorkgroup(WORKSPACES)];

/** An action that touches every workspace it is given, recording which; a plan touches none. */
function touching() {
  const touched: string[] = [];
  const planned: string[] = [];
  const action = testAction(
    'touch',
    async (ctx) => {
      await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws) => {
        touched.push(ws.workspaceId);
        return { outcome: 'succeeded' };
      });
    },
    async (ctx) => void planned.push(...ctx.workspaces.map((ws) => ws.workspaceId)),
  );
  return { action, touched, planned };
}

function job(extra = '') {
  const { action } = touching();
  const policy = parsePolicy(
    `version: 1
jobs:
  touch-all:
    schedule: "0 20 * * *"
    action: touch
    target: { workgroups: ["*"] }
${extra}`,
    'test.yaml',
    { registry: createActionCatalog([action]), env: {} },
  );
  return policy.jobs[0] as (typeof policy.jobs)[number];
}

/** A client answering `operations`; any other operation is a call the test did not expect. */
function fakeApi(operations: Record<string, () => Promise<unknown>>): ApiClient {
  const unexpected = (name: string) => () => Promise.reject(new Error(`unexpected call: ${name}`));
  return new Proxy(operations, {
    get: (known, name) => known[String(name)] ?? unexpected(String(name)),
  }) as unknown as ApiClient;
}

function deps(action: Action, extra: Partial<RunDependencies> = {}) {
  const listings: FleetListing[] = [];
  const sink: FleetListingSink = { save: async (listing) => void listings.push(listing) };
  const checkpoints = new MemoryCheckpointStore();
  const api = fakeApi({ listWorkgroups: async () => ({ result: fleet, requestId: 'req-list' }) });
  const given: RunDependencies = {
    api,
    io: { files: {} as never, secretSinks: {} as never },
    actions: new Map([[action.name, action]]),
    checkpoints,
    log: silentLogger,
    signal: new AbortController().signal,
    pollIntervalMs: 1_000,
    clock: new FakeClock(),
    listings: sink,
    ...extra,
  };
  return { given, listings, checkpoints };
}

const request = (extra = '', dryRun = false) => ({
  runId: 'touch-all@1',
  job: job(extra),
  trigger: 'manual' as const,
  dryRun,
});

const PART = { index: 1, keys: ['wg-1/ws-2', 'wg-1/ws-3'] };
const slice: FleetListing = {
  at: '2026-11-20T12:00:00.000Z',
  runId: 'touch-all@1',
  job: 'touch-all',
  workgroups: trimListing(fleet),
};

describe('executeRun', () => {
  it('works every selected target and leaves the listing it saw for readers', async () => {
    const { action, touched } = touching();
    const { given, listings } = deps(action);
    const summary = await executeRun(given, request());
    expect(touched).toEqual(WORKSPACES);
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { total: 3, succeeded: 3 } });
    expect(listings.map((listing) => listing.runId)).toEqual(['touch-all@1']);
  });

  it('refuses a run past maxTargets before touching anything, saying why', async () => {
    const { action, touched } = touching();
    const summary = await executeRun(deps(action).given, request('    maxTargets: 2\n'));
    expect(touched).toEqual([]);
    expect(summary.outcome).toBe('failed');
    expect(summary.reason).toMatch(/^refused: .*3 targets exceed maxTargets \(2\)/);
  });

  it('only plans a dry run: no target is acted on', async () => {
    const { action, touched, planned } = touching();
    const summary = await executeRun(deps(action).given, request('', true));
    expect(touched).toEqual([]);
    expect(planned).toEqual(WORKSPACES);
    expect(summary.dryRun).toBe(true);
  });
});

describe('executePart', () => {
  it('works only its own targets, from the slice its run handed it, under the run id', async () => {
    const { action, touched } = touching();
    const { given, checkpoints } = deps(action, {
      api: fakeApi({ listWorkgroups: () => Promise.reject(new Error('a part lists nothing')) }),
    });
    const summary = await executePart(given, { ...request(), part: PART, slice, deliveries: 1 });
    expect(touched).toEqual(['ws-2', 'ws-3']);
    expect(summary).toMatchObject({ runId: 'touch-all@1', counts: { total: 2, succeeded: 2 } });
    expect([...(await checkpoints.load('touch-all@1')).keys()].sort()).toEqual(PART.keys);
  });

  it('is not refused by maxTargets (its run checked the whole fleet) and leaves no listing of its own', async () => {
    const { action, touched } = touching();
    const { given, listings } = deps(action);
    const summary = await executePart(given, {
      ...request('    maxTargets: 1\n'),
      part: PART,
      slice,
      deliveries: 1,
    });
    expect(touched).toEqual(['ws-2', 'ws-3']);
    expect(summary.outcome).toBe('succeeded');
    expect(listings).toEqual([]);
  });
});
