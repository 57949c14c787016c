import { describe, expect, it } from 'vitest';
import {
  type Hold,
  holdFor,
  holdLookup,
  holdPatternProblem,
  MemoryOwnershipLedger,
  type Ownership,
  priceOf,
  RunOwnership,
  readOnlyLedger,
} from '../../../src/engine/index.js';
import { savingsReport } from '../../../src/engine/savings.js';
import { createLogger } from '../../../src/log/logger.js';
import { systemClock } from '../../../src/time/index.js';

const log = createLogger({ level: 'silent' });
const T0 = Date.parse('2026-11-20T00:00:00Z');
const at = (hours: number) => new Date(T0 + hours * 3_600_000);

const ws = { workgroupId: 'wg1', workgroupName: 'dev-alpha', workspaceId: 'ws1', workspaceName: 'kg' };

function hold(pattern: string, overrides: Partial<Hold> = {}): Hold {
  return {
    pattern,
    state: 'active',
    until: at(10).toISOString(),
    reason: 'demo',
    by: 'ana',
    createdAt: at(0).toISOString(),
    ...overrides,
  };
}

describe('holds', () => {
  it('match a workspace by names or ids, with globs in either part', () => {
    for (const pattern of ['dev-alpha/kg', 'wg1/ws1', 'dev-*/*', '*/kg', 'wg1/k?'])
      expect(holdFor([hold(pattern)], ws, at(1))?.pattern).toBe(pattern);
    for (const pattern of ['dev-beta/kg', 'dev-alpha/other', 'prod-*/*'])
      expect(holdFor([hold(pattern)], ws, at(1))).toBeUndefined();
  });

  it('have no effect from their until on', () => {
    expect(holdFor([hold('dev-alpha/kg')], ws, at(10))).toBeUndefined();
  });

  it('the one placed last wins where two cover a workspace', () => {
    const broad = hold('dev-*/*', { state: 'stopped', createdAt: at(0).toISOString() });
    const narrow = hold('dev-alpha/kg', { state: 'active', createdAt: at(1).toISOString() });
    expect(holdFor([narrow, broad], ws, at(2))?.state).toBe('active');
    expect(holdFor([broad, { ...narrow, createdAt: at(-1).toISOString() }], ws, at(2))?.state).toBe(
      'stopped',
    );
  });

  it('one lookup for a whole fleet answers each workspace as a lone check would: the newest unexpired match, ties in the order given', () => {
    const holds = [
      hold('dev-*/*', { state: 'stopped', createdAt: at(0).toISOString() }),
      hold('dev-alpha/kg', { createdAt: at(1).toISOString() }),
      hold('wg2/*', { reason: 'first of a tie', createdAt: at(1).toISOString() }),
      hold('*/ws3', { reason: 'second of a tie', createdAt: at(1).toISOString() }),
      hold('prod-*/*', { until: at(1).toISOString(), createdAt: at(0.5).toISOString() }),
    ];
    const fleet = [
      ws,
      { workgroupId: 'wg1', workgroupName: 'dev-alpha', workspaceId: 'ws2', workspaceName: 'etl' },
      { workgroupId: 'wg2', workgroupName: 'dev-beta', workspaceId: 'ws3', workspaceName: 'kg' },
      { workgroupId: 'wg3', workgroupName: 'prod-core', workspaceId: 'ws4', workspaceName: 'kg' },
      { workgroupId: 'wg3', workgroupName: 'prod-core', workspaceId: 'ws5' },
    ];
    const lookup = holdLookup(holds, at(2));
    expect(fleet.map((w) => lookup(w)?.reason ?? lookup(w)?.pattern)).toEqual(
      fleet.map((w) => holdFor(holds, w, at(2))?.reason ?? holdFor(holds, w, at(2))?.pattern),
    );
    expect(fleet.map((w) => lookup(w)?.pattern)).toEqual([
      'dev-alpha/kg',
      'dev-*/*',
      'wg2/*',
      undefined,
      undefined,
    ]);
  });

  it('patterns are workgroup/workspace', () => {
    expect(holdPatternProblem('dev-alpha/kg')).toBeUndefined();
    expect(holdPatternProblem('dev-alpha')).toMatch(/expected <workgroup>\/<workspace>/);
    expect(holdPatternProblem('a/b/c')).toMatch(/expected/);
    expect(holdPatternProblem('/kg')).toMatch(/expected/);
  });
});

describe('RunOwnership', () => {
  const selected = {
    ...ws,
    status: 'Active',
    databaseId: undefined,
    region: undefined,
    workspace: { workspace_id: 'ws1', workspace_type: { typeName: 'TG-8' } },
  } as never;

  function bound(ledger: MemoryOwnershipLedger, runId = 'pause@1', now = at(0)) {
    return new RunOwnership({
      ledger,
      owner: 'pause',
      ownerKind: 'job',
      runId,
      keys: ['wg1/ws1'],
      pricing: { currency: 'EUR', perHour: { 'TG-8': 1.2 }, default: 0.5 },
      log,
      clock: { ...systemClock, now: () => now.getTime() },
    });
  }

  it('writes the intent before the call, with the price of the workspace type, and confirms it after', async () => {
    const ledger = new MemoryOwnershipLedger();
    const ownership = bound(ledger);
    await ownership.intend(selected);
    expect(ledger.records.get('wg1/ws1')).toMatchObject({
      state: 'intent',
      pricePerHour: 1.2,
      currency: 'EUR',
    });
    await ownership.confirm('wg1/ws1', 'req-1');
    expect(ledger.records.get('wg1/ws1')).toMatchObject({ state: 'confirmed', requestId: 'req-1' });
  });

  it('ends a refused intent only while it is the one refused, and never a confirmed pause', async () => {
    const ledger = new MemoryOwnershipLedger();
    const first = await bound(ledger, 'pause@1').intend(selected);
    const second = await bound(ledger, 'pause@2').intend(selected);
    if (!first.written || !second.written) throw new Error('both intents are written');
    // the first run's late refusal cannot end the intent the second run wrote since
    await bound(ledger, 'pause@1').refused('wg1/ws1', first.record);
    expect(ledger.records.get('wg1/ws1')?.runId).toBe('pause@2');
    const mine = bound(ledger, 'pause@2');
    await mine.confirm('wg1/ws1', undefined);
    await mine.refused('wg1/ws1', second.record);
    expect(ledger.records.get('wg1/ws1')?.state).toBe('confirmed');
  });

  it('in a dry run the ledger is read but never written', async () => {
    const ledger = new MemoryOwnershipLedger();
    const ownership = new RunOwnership({
      ledger: readOnlyLedger(ledger),
      owner: 'pause',
      ownerKind: 'job',
      runId: 'pause@1',
      keys: ['wg1/ws1'],
      pricing: undefined,
      log,
    });
    await expect(ownership.intend(selected)).rejects.toThrow(
      'a dry run must not change the ownership ledger',
    );
    expect(await ownership.records()).toEqual(new Map());
  });

  it('prices a type the table lists, else its default, else not at all', () => {
    const pricing = { currency: 'EUR', perHour: { 'TG-8': 1.2 }, default: 0.5 };
    expect(priceOf(pricing, 'TG-8')).toEqual({ pricePerHour: 1.2, currency: 'EUR' });
    expect(priceOf(pricing, 'TG-64')).toEqual({ pricePerHour: 0.5, currency: 'EUR' });
    expect(priceOf({ currency: 'EUR', perHour: {} }, 'TG-64')).toBeUndefined();
    expect(priceOf(undefined, 'TG-8')).toBeUndefined();
  });
});

describe('savings', () => {
  const owned = (key: string, pausedHour: number, overrides: Partial<Ownership> = {}): Ownership => ({
    key,
    workgroupId: key.split('/')[0] ?? '',
    workspaceId: key.split('/')[1] ?? '',
    workgroupName: 'dev-alpha',
    workspaceName: key.split('/')[1],
    owner: 'evening-pause',
    ownerKind: 'job',
    runId: 'r',
    state: 'confirmed',
    intendedAt: at(pausedHour).toISOString(),
    pausedAt: at(pausedHour).toISOString(),
    pricePerHour: 2,
    currency: 'EUR',
    ...overrides,
  });

  it('counts closed and still-owned pauses clipped to the span, prices each with its own price, and never an intent', () => {
    const closed = {
      ...owned('wg/a', 0),
      from: at(-10).toISOString(),
      to: at(5).toISOString(),
      endedBy: 'resumed' as const,
    };
    const report = savingsReport(
      [closed],
      [owned('wg/b', 20), owned('wg/c', 0, { state: 'intent', pausedAt: undefined })],
      at(0),
      at(24),
    );
    expect(report).toMatchObject({ currency: 'EUR', totalPausedHours: 9, totalEstimatedCost: 18 });
    expect(report.workspaces.map((w) => [w.workspaceId, w.pausedHours, w.estimatedCost])).toEqual([
      ['a', 5, 10],
      ['b', 4, 8],
    ]);
  });

  it('without a price table reports hours and no currency or cost', () => {
    const report = savingsReport(
      [],
      [owned('wg/a', 0, { pricePerHour: undefined, currency: undefined })],
      at(0),
      at(2),
    );
    expect(report).toMatchObject({ currency: null, totalPausedHours: 2, totalEstimatedCost: null });
    expect(report.workspaces[0]?.estimatedCost).toBeNull();
  });
});
