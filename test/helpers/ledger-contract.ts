import { expect, it } from 'vitest';
import type { Ownership, OwnershipLedger, PausedInterval } from '../../src/engine/index.js';

/** A ledger under test, and the closed paused stretches it booked. */
export interface LedgerUnderTest {
  ledger: OwnershipLedger;
  intervals(): Promise<PausedInterval[]>;
}

const T0 = Date.parse('2026-11-20T19:30:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

/** An intent of `owner` for `key`, by `runId`, as `RunOwnership.intend` writes it. */
export function intentRecord(key: string, overrides: Partial<Ownership> = {}): Ownership {
  const [workgroupId = '', workspaceId = ''] = key.split('/');
  return {
    key,
    workgroupId,
    workspaceId,
    workgroupName: `name-${workgroupId}`,
    workspaceName: `name-${workspaceId}`,
    owner: 'office-hours',
    ownerKind: 'window',
    runId: 'office-hours@1',
    state: 'intent',
    intendedAt: at(0).toISOString(),
    intentId: `intent-${key}-${overrides.runId ?? 'office-hours@1'}`,
    pricePerHour: 1.2,
    currency: 'EUR',
    ...overrides,
  };
}

/**
 * The rules every OwnershipLedger keeps, the in-memory one (unit) and Redis's (integration) alike:
 * one suite, so the two cannot drift apart.
 */
export function ledgerContract(make: () => LedgerUnderTest): void {
  it('an intent is written with the next sequence number and journaled; the sequence moves on with it', async () => {
    const { ledger } = make();
    const before = await ledger.sequence();
    const outcome = await ledger.intend(intentRecord('wg/a'));
    if (!outcome.written) throw new Error('an intent on a free workspace is written');
    expect(outcome.prior).toBeUndefined();
    expect(outcome.record.intentSeq).toBe(before + 1);
    expect(await ledger.sequence()).toBe(before + 1);
    expect((await ledger.journal(['wg/a'])).get('wg/a')).toMatchObject({
      state: 'intent',
      runId: 'office-hours@1',
    });
  });

  it('a second intent of the same owner replaces the first (an earlier try whose answer is unknown) and returns it as prior', async () => {
    const { ledger } = make();
    await ledger.intend(intentRecord('wg/a'));
    const again = await ledger.intend(intentRecord('wg/a', { runId: 'office-hours@2', intentId: 'second' }));
    if (!again.written) throw new Error('an intent over the owner’s own intent is written');
    expect(again.prior).toMatchObject({ runId: 'office-hours@1', state: 'intent' });
    expect(again.record).toMatchObject({ runId: 'office-hours@2', intentId: 'second' });
    expect(again.record.intentSeq).toBeGreaterThan(again.prior?.intentSeq ?? Number.POSITIVE_INFINITY);
  });

  it('an intent never overwrites a confirmed pause, nor another owner’s record', async () => {
    const { ledger } = make();
    await ledger.intend(intentRecord('wg/a'));
    await ledger.confirm('wg/a', 'office-hours', { pausedAt: at(1).toISOString(), requestId: 'req-1' });
    const over = await ledger.intend(intentRecord('wg/a', { runId: 'office-hours@2' }));
    expect(over).toMatchObject({ written: false, prior: { state: 'confirmed', requestId: 'req-1' } });
    await ledger.intend(intentRecord('wg/b', { owner: 'nightly-pause', ownerKind: 'job' }));
    expect(await ledger.intend(intentRecord('wg/b'))).toMatchObject({
      written: false,
      prior: { owner: 'nightly-pause' },
    });
    expect((await ledger.all()).get('wg/a')).toMatchObject({ runId: 'office-hours@1', state: 'confirmed' });
  });

  it('a confirmation is numbered after the intent, journaled, and only of the owner’s own intent', async () => {
    const { ledger } = make();
    const intent = await ledger.intend(intentRecord('wg/a'));
    expect(await ledger.confirm('wg/a', 'someone-else', { pausedAt: at(1).toISOString() })).toBeUndefined();
    const confirmed = await ledger.confirm('wg/a', 'office-hours', {
      pausedAt: at(1).toISOString(),
      requestId: 'req-1',
    });
    expect(confirmed).toMatchObject({
      state: 'confirmed',
      pausedAt: at(1).toISOString(),
      requestId: 'req-1',
    });
    expect(confirmed?.confirmSeq).toBeGreaterThan((intent.written && intent.record.intentSeq) || 0);
    expect(await ledger.sequence()).toBe(confirmed?.confirmSeq);
    expect(await ledger.confirm('wg/a', 'office-hours', { pausedAt: at(2).toISOString() })).toBeUndefined();
    expect((await ledger.journal()).get('wg/a')).toMatchObject({ state: 'confirmed', requestId: 'req-1' });
  });

  it('a confirmation given the caller’s intent answers the record as stored; given another intent of the owner, the stored one', async () => {
    const { ledger } = make();
    const first = await ledger.intend(intentRecord('wg/a'));
    const second = await ledger.intend(intentRecord('wg/b'));
    if (!first.written || !second.written) throw new Error('intents on free workspaces are written');
    const mine = await ledger.confirm('wg/a', 'office-hours', {
      pausedAt: at(1).toISOString(),
      requestId: 'req-1',
      intent: first.record,
    });
    expect(mine).toEqual((await ledger.all()).get('wg/a'));
    // an intent that is not the stored one (another execution replaced it): the stored one is answered
    const stale = await ledger.confirm('wg/b', 'office-hours', {
      pausedAt: at(1).toISOString(),
      intent: { ...second.record, intentId: 'an-older-intent', workspaceName: 'stale' },
    });
    expect(stale).toEqual((await ledger.all()).get('wg/b'));
    expect(stale).toMatchObject({ workspaceName: 'name-b', intentId: second.record.intentId });
  });
  it('end keeps a record that does not meet its condition: another run, another intent, another state', async () => {
    const { ledger } = make();
    const { record } = (await ledger.intend(intentRecord('wg/a'))) as { record: Ownership };
    expect(await ledger.end('wg/a', 'refused', at(1), { runId: 'office-hours@9' })).toBeUndefined();
    expect(await ledger.end('wg/a', 'refused', at(1), { intentId: 'another' })).toBeUndefined();
    await ledger.confirm('wg/a', 'office-hours', { pausedAt: at(1).toISOString() });
    expect(
      await ledger.end('wg/a', 'refused', at(2), {
        runId: record.runId,
        intentId: record.intentId,
        state: 'intent',
      }),
    ).toBeUndefined();
    expect((await ledger.all()).get('wg/a')?.state).toBe('confirmed');
  });

  it('a resume ends a confirmed pause with its paused time, and an intent with the time from the intent: the resume proves the pause took', async () => {
    const { ledger, intervals } = make();
    await ledger.intend(intentRecord('wg/a'));
    await ledger.confirm('wg/a', 'office-hours', { pausedAt: at(1).toISOString() });
    await ledger.intend(intentRecord('wg/b'));
    await ledger.end('wg/a', 'resumed', at(61));
    await ledger.end('wg/b', 'resumed', at(120));
    expect((await intervals()).map((i) => [i.key, i.from, i.to, i.endedBy])).toEqual([
      ['wg/a', at(1).toISOString(), at(61).toISOString(), 'resumed'],
      ['wg/b', at(0).toISOString(), at(120).toISOString(), 'resumed'],
    ]);
  });

  it('an intent that never took, or was refused, books no paused time', async () => {
    const { ledger, intervals } = make();
    await ledger.intend(intentRecord('wg/a'));
    await ledger.intend(intentRecord('wg/b'));
    await ledger.end('wg/a', 'not-paused', at(5));
    await ledger.end('wg/b', 'refused', at(5));
    expect(await intervals()).toEqual([]);
    expect((await ledger.all()).size).toBe(0);
  });

  it('the journal outlives the record: cleared by a hand-back or a sight of the workspace running, and by a refusal of its own intent only', async () => {
    const { ledger } = make();
    for (const key of ['wg/resumed', 'wg/seen', 'wg/refused', 'wg/kept'])
      await ledger.intend(intentRecord(key, { intentId: `id-${key}` }));
    await ledger.confirm('wg/kept', 'office-hours', { pausedAt: at(1).toISOString() });
    await ledger.end('wg/resumed', 'resumed', at(2));
    await ledger.end('wg/seen', 'seen-active', at(2));
    await ledger.end('wg/refused', 'refused', at(2), { intentId: 'id-wg/refused', state: 'intent' });
    expect([...(await ledger.journal()).keys()]).toEqual(['wg/kept']);
    // a record lost outside the ledger's rules (deleted by hand): the journal still says who paused it
    const lost = (await ledger.all()).get('wg/kept') as Ownership;
    await ledger.end('wg/kept', 'refused', at(3), { intentId: lost.intentId });
    expect((await ledger.all()).has('wg/kept')).toBe(false);
    expect((await ledger.journal(['wg/kept', 'wg/none'])).get('wg/kept')).toMatchObject({
      state: 'confirmed',
    });
  });
}
