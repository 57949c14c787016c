import { describe, expect, it } from 'vitest';
import {
  type ActedTarget,
  nextDriftStreak,
  type Ownership,
  type TargetRecord,
  windowActed,
} from '../../../src/engine/index.js';

function record(key: string, outcome: TargetRecord['outcome']): TargetRecord {
  return { key, outcome, attempts: 1, requestIds: [] };
}

function owned(key: string, price?: { pricePerHour: number; currency: string }): [string, Ownership] {
  const [workgroupId = '', workspaceId = ''] = key.split('/');
  return [
    key,
    {
      key,
      workgroupId,
      workspaceId,
      owner: 'office',
      ownerKind: 'window',
      runId: 'office@1',
      state: 'confirmed',
      intendedAt: '2026-11-20T18:31:00.000Z',
      pausedAt: '2026-11-20T18:31:01.000Z',
      ...(price ?? {}),
    },
  ];
}

describe('what a reconciliation did (acted)', () => {
  it('counts succeeded pauses and resumes and failed acts; records it did not act on count for nothing', () => {
    const targets: ActedTarget[] = [
      { record: record('wg/a', 'succeeded'), act: 'pause' },
      { record: record('wg/b', 'succeeded'), act: 'pause' },
      { record: record('wg/c', 'failed'), act: 'pause' },
      { record: record('wg/d', 'succeeded'), act: 'resume' },
      { record: record('wg/e', 'skipped'), act: undefined },
      { record: record('wg/f', 'failed'), act: undefined },
    ];
    const prices = new Map([
      owned('wg/a', { pricePerHour: 1.2, currency: 'EUR' }),
      owned('wg/b', { pricePerHour: 0.35, currency: 'EUR' }),
    ]);
    expect(windowActed(targets, prices)).toEqual({
      paused: 2,
      resumed: 1,
      failed: 1,
      hourlyCostAvoided: 1.55,
      currency: 'EUR',
      unpriced: 0,
    });
  });

  it('says a pause without a price is unpriced instead of guessing one; none priced is a null cost', () => {
    const targets: ActedTarget[] = [
      { record: record('wg/a', 'succeeded'), act: 'pause' },
      { record: record('wg/b', 'succeeded'), act: 'pause' },
    ];
    expect(windowActed(targets, new Map([owned('wg/a')]))).toMatchObject({
      paused: 2,
      hourlyCostAvoided: null,
      currency: null,
      unpriced: 2,
    });
    const oneCurrency = new Map([
      owned('wg/a', { pricePerHour: 2, currency: 'EUR' }),
      owned('wg/b', { pricePerHour: 3, currency: 'USD' }),
    ]);
    expect(windowActed(targets, oneCurrency)).toMatchObject({
      hourlyCostAvoided: 2,
      currency: 'EUR',
      unpriced: 1,
    });
  });
});

describe('drift streaks', () => {
  const t0 = new Date('2026-11-20T18:31:00Z');
  const t1 = new Date('2026-11-20T18:36:00Z');

  it('continues while the same workspaces drift, in any order, and keeps when it began', () => {
    const first = nextDriftStreak(undefined, ['wg/a', 'wg/b'], t0);
    expect(first).toMatchObject({ count: 1, workspaces: 2, since: t0.toISOString() });
    const second = nextDriftStreak(first, ['wg/b', 'wg/a'], t1);
    expect(second).toEqual({ ...first, count: 2 });
  });

  it('starts over when other workspaces drift, and ends when none does', () => {
    const first = nextDriftStreak(undefined, ['wg/a'], t0);
    const other = nextDriftStreak(first, ['wg/a', 'wg/c'], t1);
    expect(other).toMatchObject({ count: 1, workspaces: 2, since: t1.toISOString() });
    expect(other?.set).not.toBe(first?.set);
    expect(nextDriftStreak(other, [], t1)).toBeUndefined();
  });
});
