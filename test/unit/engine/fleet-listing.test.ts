import { describe, expect, it } from 'vitest';
import { type ApiClient, ApiError, type Workgroup } from '../../../src/api/index.js';
import {
  type Action,
  executePart,
  executeRun,
  type FleetListing,
  type FleetListingSink,
  MemoryCheckpointStore,
  type RunSplitter,
  sliceListing,
  trimListing,
  workspaceRef,
} from '../../../src/engine/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { createActionCatalog, parsePolicy } from '../../../src/policy/index.js';
import { instantClock } from '../../helpers/clock.js';
import { testAction } from '../../helpers/test-action.js';

const START = Date.parse('2026-11-25T20:00:00.000Z');

/** A workgroup as the API lists it: with what a listing leaves out (creator, databases, addons…). */
function workgroup(status: string): Workgroup {
  return {
    workgroup_id: 'wg-1',
    name: 'dev-core',
    region: 'us-east-1',
    creator: 'someone@example.com',
    svc_databases: [{ database_id: 'db-1', name: 'main' }],
    workspaces: ['ws-1', 'ws-2'].map((id) => ({
      workspace_id: id,
      name: id.replace('ws', 'api'),
      workgroup_id: 'wg-1',
      workgroup_name: 'dev-core',
      status,
      region: 'us-east-1',
      database_id: 'db-1',
      creator: 'someone@example.com',
      addons: [{ addons_id: 'a-1', enable: true }],
      agent_config: { heartbeat_interval_seconds: 30 },
      workspace_type: { cpu: '8', memory: '32Gi', typeName: 'TG-8' },
    })),
  };
}

/** The API's answers to listings, in turn: by default the fleet Active at the start of a run, then Stopped. */
function fakeApi(answers: (Workgroup[] | Error)[] = [[workgroup('Active')], [workgroup('Stopped')]]) {
  let calls = 0;
  const api = {
    listWorkgroups: async () => {
      const answer = answers[Math.min(calls++, answers.length - 1)];
      if (answer instanceof Error) throw answer;
      return { result: answer };
    },
    pauseWorkspace: async () => ({ result: {}, requestId: 'req-pause' }),
  };
  return api as unknown as ApiClient;
}

/** An action that pauses ws-1 (its record says Stopping) and skips ws-2. */
const stoppingAction = testAction('pause-one', async (ctx) => {
  await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (ws) => {
    if (ws.workspaceId !== 'ws-1') return { outcome: 'skipped', reason: 'not this one' };
    await ctx.api.pauseWorkspace(ws.workgroupId, ws.workspaceId);
    return { outcome: 'succeeded', status: 'Stopping' };
  });
});

/** An action that reads the fleet again in a real run (as a wait does) and only looks in a plan. */
function lookAction(clock: ReturnType<typeof instantClock>): Action {
  return testAction('look', async (ctx) => {
    clock.advance(60_000);
    await ctx.fleet.refresh();
  });
}

function job(extra = '', action = 'look') {
  const policy = parsePolicy(
    `version: 1
jobs:
  look-around:
    schedule: "0 20 * * *"
    action: ${action}
    target: { workgroups: ["*"] }
${extra}`,
    'test.yaml',
    {
      registry: createActionCatalog([lookAction(instantClock(START)), stoppingAction]),
      env: {},
    },
  );
  return policy.jobs[0] as (typeof policy.jobs)[number];
}

function recordingSink(): FleetListingSink & { saved: FleetListing[] } {
  const saved: FleetListing[] = [];
  return {
    saved,
    save: async (listing) => {
      saved.push(listing);
    },
  };
}

function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { log, lines };
}

async function run(
  options: {
    dryRun?: boolean;
    listings?: FleetListingSink;
    api?: ApiClient;
    jobExtra?: string;
    action?: Action;
  } = {},
) {
  const clock = instantClock(START);
  const { log, lines } = capturedLog();
  const summary = await executeRun(
    {
      api: options.api ?? fakeApi(),
      io: { files: {} as never, secretSinks: {} as never },
      actions: new Map([
        ['look', lookAction(clock)],
        ...(options.action ? [[options.action.name, options.action] as const] : []),
      ]),
      checkpoints: new MemoryCheckpointStore(),
      log,
      signal: new AbortController().signal,
      pollIntervalMs: 1_000,
      clock,
      ...(options.listings ? { listings: options.listings } : {}),
    },
    {
      runId: 'look-around@1',
      job: job(options.jobExtra, options.action?.name),
      trigger: 'manual',
      dryRun: options.dryRun ?? false,
    },
  );
  return { summary, lines };
}

describe('a run leaves the fleet listing it saw', () => {
  it('saves, by its end, the freshest listing it saw, trimmed to what targeting and the console read', async () => {
    const listings = recordingSink();
    const { summary } = await run({ listings });
    expect(summary.outcome).toBe('succeeded');
    expect(listings.saved).toEqual([
      {
        at: new Date(START + 60_000).toISOString(),
        runId: 'look-around@1',
        job: 'look-around',
        workgroups: [
          {
            workgroup_id: 'wg-1',
            name: 'dev-core',
            region: 'us-east-1',
            workspaces: ['ws-1', 'ws-2'].map((id) => ({
              workspace_id: id,
              name: id.replace('ws', 'api'),
              workgroup_id: 'wg-1',
              workgroup_name: 'dev-core',
              status: 'Stopped',
              region: 'us-east-1',
              database_id: 'db-1',
              workspace_type: { cpu: '8', memory: '32Gi', typeName: 'TG-8' },
            })),
          },
        ],
      },
    ]);
  });

  it('saves the listing of a dry run too: listing the fleet is a read', async () => {
    const listings = recordingSink();
    await run({ listings, dryRun: true });
    expect(
      listings.saved.map((listing) => [listing.at, listing.workgroups[0]?.workspaces?.[0]?.status]),
    ).toEqual([[new Date(START).toISOString(), 'Active']]);
  });

  it('saves the listing of a run refused by maxTargets, which listed the fleet before refusing', async () => {
    const listings = recordingSink();
    const { summary } = await run({ listings, jobExtra: '    maxTargets: 1\n' });
    expect(summary.outcome).toBe('failed');
    expect(summary.reason).toMatch(/maxTargets/);
    expect(listings.saved).toHaveLength(1);
  });

  it('saves nothing when the run could not list the fleet', async () => {
    const listings = recordingSink();
    const refused = new ApiError({
      operation: 'listWorkgroups',
      method: 'GET',
      path: '/',
      status: 401,
      type: 'Unauthorized',
      reason: 'bad key',
    });
    const api = { listWorkgroups: async () => Promise.reject(refused) } as unknown as ApiClient;
    const { summary } = await run({ listings, api });
    expect(summary.reason).toBe('could not list the fleet');
    expect(listings.saved).toEqual([]);
  });

  it('logs a save that fails, with the run and job, and keeps the run’s outcome', async () => {
    const listings: FleetListingSink = { save: () => Promise.reject(new Error('READONLY replica')) };
    const { summary, lines } = await run({ listings });
    expect(summary.outcome).toBe('succeeded');
    expect(lines.filter((line) => line.level === 40)).toEqual([
      expect.objectContaining({
        msg: 'could not save the fleet listing the run saw; its outcome stands',
        runId: 'look-around@1',
        job: 'look-around',
        err: expect.objectContaining({ message: 'READONLY replica' }),
      }),
    ]);
  });

  it('lays the statuses its targets left over the listing it saves, by their records, and lists no more', async () => {
    const listings = recordingSink();
    let listed = 0;
    const api = fakeApi([[workgroup('Active')]]);
    const counting = {
      ...api,
      listWorkgroups: async () => {
        listed++;
        return api.listWorkgroups();
      },
    } as unknown as ApiClient;
    const { summary } = await run({ listings, api: counting, action: stoppingAction });
    expect(summary.targets.map((target) => [target.key, target.status])).toEqual([
      ['wg-1/ws-1', 'Stopping'],
      ['wg-1/ws-2', undefined],
    ]);
    expect(
      listings.saved.map((listing) => listing.workgroups[0]?.workspaces?.map((ws) => ws.status)),
    ).toEqual([['Stopping', 'Active']]);
    expect(listed).toBe(1);
  });
});

describe('sliceListing', () => {
  const listed = (wg: string, ids: string[]) => ({
    workgroup_id: wg,
    name: `name-${wg}`,
    region: 'eu-west-1',
    workspaces: ids.map((id) => ({
      workspace_id: id,
      name: `name-${id}`,
      workgroup_id: wg,
      workgroup_name: `name-${wg}`,
      status: 'Active',
      region: 'eu-west-1',
      database_id: `db-${id}`,
    })),
  });
  const listing: FleetListing = {
    at: '2026-11-25T20:00:00.000Z',
    seq: 7,
    runId: 'r',
    job: 'j',
    workgroups: [listed('a', ['1', '2', '3']), listed('b', ['4', '5'])],
  };
  const ids = (slice: FleetListing | undefined) =>
    slice?.workgroups.map(
      (wg) => `${wg.workgroup_id}:${wg.workspaces?.map((ws) => ws.workspace_id).join(',')}`,
    );

  it('gives each part the workspaces of its keys, by workgroup, a workgroup split across parts in each', () => {
    const slices = sliceListing(listing, [
      { index: 0, keys: ['a/1', 'a/2'] },
      { index: 1, keys: ['a/3', 'b/4', 'b/5'] },
      { index: 2, keys: ['c/9'] },
    ]);
    expect(ids(slices.get(0))).toEqual(['a:1,2']);
    expect(ids(slices.get(1))).toEqual(['a:3', 'b:4,5']);
    expect(ids(slices.get(2))).toEqual([]);
    expect(slices.get(1)).toMatchObject({ at: listing.at, seq: 7, runId: 'r', job: 'j' });
    expect(slices.get(1)?.workgroups[1]).toMatchObject({ name: 'name-b', region: 'eu-west-1' });
  });
});

describe('a part of a split run starts from its run’s listing', () => {
  const PART = { index: 0, keys: ['wg-1/ws-1', 'wg-1/ws-2'] };
  const slice: FleetListing = {
    at: new Date(START).toISOString(),
    seq: 3,
    runId: 'look-around@1',
    job: 'look-around',
    workgroups: trimListing([workgroup('Active')]),
  };
  const noListing = {
    listWorkgroups: async () => Promise.reject(new Error('a part lists nothing')),
    pauseWorkspace: async () => ({ result: {}, requestId: 'req-pause' }),
  } as unknown as ApiClient;

  async function runPart(storedSlice: () => Promise<FleetListing | undefined>, handed?: FleetListing) {
    const split: RunSplitter = {
      partSize: 1,
      runParts: async () => Promise.reject(new Error('a part is not split again')),
      listing: storedSlice,
      earlierParts: async () => undefined,
    };
    return executePart(
      {
        api: noListing,
        io: { files: {} as never, secretSinks: {} as never },
        actions: new Map([[stoppingAction.name, stoppingAction]]),
        checkpoints: new MemoryCheckpointStore(),
        log: capturedLog().log,
        signal: new AbortController().signal,
        pollIntervalMs: 1_000,
        clock: instantClock(START),
        split,
      },
      {
        runId: 'look-around@1',
        job: job('', stoppingAction.name),
        trigger: 'manual',
        dryRun: false,
        part: PART,
        deliveries: 1,
        ...(handed ? { slice: handed } : {}),
      },
    );
  }

  it('works from the slice its run handed it when the run works it itself, reading nothing back', async () => {
    const summary = await runPart(() => Promise.reject(new Error('read back from the store')), slice);
    expect(summary.counts).toMatchObject({ total: 2, succeeded: 1, skipped: 1, failed: 0 });
  });

  it('reads its slice from its run’s store when another worker took it', async () => {
    let reads = 0;
    const summary = await runPart(async () => {
      reads++;
      return slice;
    });
    expect(reads).toBe(1);
    expect(summary.counts).toMatchObject({ total: 2, succeeded: 1, skipped: 1, failed: 0 });
  });
});
