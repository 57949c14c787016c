import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Ownership, RunSummary, TargetRecord } from '../../../src/engine/index.js';
import {
  fleetStateStores,
  RUNS_PER_WORKSPACE,
  RunHistory,
  WorkspaceHistory,
} from '../../../src/store/index.js';
import { redisKeys } from '../../../src/store/keys.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

const T0 = Date.parse('2026-11-20T00:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

function target(workspace: string, outcome: TargetRecord['outcome'], reason?: string): TargetRecord {
  return {
    key: `wg/${workspace}`,
    workgroupId: 'wg',
    workspaceId: workspace,
    outcome,
    attempts: 1,
    requestIds: [`req-${workspace}-1`, `req-${workspace}-2`],
    ...(reason ? { reason } : {}),
    ...(outcome === 'failed' ? { error: { message: 'pauseWorkspace → 500 Internal-Error' } } : {}),
  };
}

function run(n: number, targets: TargetRecord[], overrides: Partial<RunSummary> = {}): RunSummary {
  return {
    runId: `office@${n}`,
    job: 'office',
    action: 'reconcile-window',
    trigger: 'schedule',
    dryRun: false,
    startedAt: at(n),
    finishedAt: at(n),
    outcome: 'succeeded',
    counts: { total: targets.length, succeeded: 0, skipped: 0, failed: 0, planned: 0 },
    targets,
    findings: [],
    requestIds: [],
    ...overrides,
  };
}

describe('the runs kept per workspace, for its timeline', () => {
  it('keeps, as each run is recorded, what it did to each workspace it acted on or failed on: newest first, the last few, never a dry run or a skip', async () => {
    const prefix = uniquePrefix('ws-history');
    const history = new RunHistory(redis, { prefix });
    const workspaces = new WorkspaceHistory(redis, { prefix });
    await history.record(
      run(1, [target('a', 'succeeded', 'outside uptime: pausing'), target('b', 'skipped')]),
    );
    await history.record(run(2, [target('a', 'failed')]));
    await history.record(run(3, [target('a', 'planned')], { dryRun: true }));
    expect(await workspaces.runs('wg/a')).toEqual([
      {
        at: at(2),
        runId: 'office@2',
        job: 'office',
        action: 'reconcile-window',
        outcome: 'failed',
        error: 'pauseWorkspace → 500 Internal-Error',
        requestIds: ['req-a-1', 'req-a-2'],
      },
      {
        at: at(1),
        runId: 'office@1',
        job: 'office',
        action: 'reconcile-window',
        outcome: 'succeeded',
        reason: 'outside uptime: pausing',
        requestIds: ['req-a-1', 'req-a-2'],
      },
    ]);
    expect(await workspaces.runs('wg/b')).toEqual([]);
    for (let n = 10; n < 10 + 2 * RUNS_PER_WORKSPACE; n++)
      await history.record(run(n, [target('a', 'succeeded')]));
    const kept = await workspaces.runs('wg/a');
    expect(kept).toHaveLength(RUNS_PER_WORKSPACE);
    expect(kept[0]?.runId).toBe(`office@${9 + 2 * RUNS_PER_WORKSPACE}`);
    // the list lives as long as the history keeps runs
    expect(await redis.pttl(redisKeys(prefix).workspaceRuns('wg/a'))).toBeGreaterThan(29 * 86_400_000);
  });

  it('lists a run recorded twice once', async () => {
    const prefix = uniquePrefix('ws-history');
    const history = new RunHistory(redis, { prefix });
    const again = run(1, [target('a', 'succeeded')]);
    await history.record(again);
    await history.record(again);
    expect((await new WorkspaceHistory(redis, { prefix }).runs('wg/a')).map((r) => r.runId)).toEqual([
      'office@1',
    ]);
  });

  it('reads the workspace’s ledger record, its journal entry and its closed pauses among the newest of the fleet', async () => {
    const prefix = uniquePrefix('ws-history');
    const { ledger } = fleetStateStores(redis, prefix);
    const record = (workspaceId: string, minutes: number): Ownership => ({
      key: `wg/${workspaceId}`,
      workgroupId: 'wg',
      workspaceId,
      owner: 'office',
      ownerKind: 'window',
      runId: `office@${minutes}`,
      state: 'confirmed',
      intendedAt: at(minutes),
      pausedAt: at(minutes),
    });
    await ledger.put(record('a', 0));
    await ledger.end('wg/a', 'seen-active', new Date(at(60)));
    for (let i = 0; i < 5; i++) {
      await ledger.put(record(`other-${i}`, 0));
      await ledger.end(`wg/other-${i}`, 'resumed', new Date(at(70 + i)));
    }
    await ledger.put(record('a', 100));
    const workspaces = new WorkspaceHistory(redis, { prefix });
    const { owned, journal } = await workspaces.ownership('wg/a');
    expect(owned).toMatchObject({ runId: 'office@100', state: 'confirmed' });
    expect(journal).toMatchObject({ runId: 'office@100' });
    expect(await workspaces.closedPauses('wg/a', 10)).toEqual({
      pauses: [expect.objectContaining({ key: 'wg/a', from: at(0), to: at(60), endedBy: 'seen-active' })],
      scanned: 6,
    });
    // bounded: the 5 pauses that ended after it are all that is looked at
    expect(await workspaces.closedPauses('wg/a', 5)).toEqual({ pauses: [], scanned: 5 });
    expect(await workspaces.ownership('wg/none')).toEqual({});
  });
});
