import { describe, expect, it } from 'vitest';
import { apportion, type PausedInterval, savingsReport } from '../../../src/engine/index.js';

const T0 = Date.parse('2026-11-20T00:00:00Z');
const at = (hours: number) => new Date(T0 + hours * 3_600_000);

/** An hour paused at `price` an hour, closed by the owner's resume. */
function hour(
  key: string,
  owner: string,
  ownerKind: 'job' | 'window',
  price: number,
  start = 0,
): PausedInterval {
  const [workgroupId = '', workspaceId = ''] = key.split('/');
  return {
    key,
    workgroupId,
    workspaceId,
    owner,
    ownerKind,
    pricePerHour: price,
    currency: 'EUR',
    from: at(start).toISOString(),
    to: at(start + 1).toISOString(),
    endedBy: 'resumed',
  };
}

const sum = (values: readonly (number | null)[]) =>
  Math.round(values.reduce<number>((s, v) => s + (v ?? 0), 0) * 100) / 100;

describe('savings figures', () => {
  it('rounds parts so they add up to their rounded total, giving the hundredths left over to those that lost most', () => {
    expect(apportion([2.0235, 2.0235, 2.0235])).toEqual([2.03, 2.02, 2.02]);
    expect(apportion([1.004, 1.006, 0.5])).toEqual([1, 1.01, 0.5]);
    expect(apportion([0.333, 0.333, 0.334], 2, 1)).toEqual([0.33, 0.33, 0.34]);
    // a target below the parts' floors takes hundredths back from those that lost least
    expect(apportion([0.5, 0.5], 2, 0.99)).toEqual([0.5, 0.49]);
    expect(apportion([])).toEqual([]);
  });

  it('reports workspace rows that add up to the total exactly, where rounding each row alone was a cent off per three', () => {
    const intervals = ['wg/a', 'wg/b', 'wg/c'].map((key) => hour(key, 'office-hours', 'window', 2.0235));
    const report = savingsReport(intervals, [], at(0), at(24));
    expect(report.totalEstimatedCost).toBe(6.07);
    expect(sum(report.workspaces.map((row) => row.estimatedCost))).toBe(6.07);
    expect(sum(report.workspaces.map((row) => row.pausedHours))).toBe(report.totalPausedHours);
  });

  it('breaks the savings down by the window or job whose pauses they were, adding up to the totals', () => {
    const intervals = [
      hour('wg/a', 'office-hours', 'window', 1.111),
      hour('wg/b', 'office-hours', 'window', 1.111, 2),
      hour('wg/c', 'nightly-pause', 'job', 0.333),
      hour('wg/a', 'nightly-pause', 'job', 0.333, 5),
    ];
    const report = savingsReport(intervals, [], at(0), at(24));
    expect(report.owners).toEqual([
      { owner: 'nightly-pause', kind: 'job', pausedHours: 2, estimatedCost: 0.67 },
      { owner: 'office-hours', kind: 'window', pausedHours: 2, estimatedCost: 2.22 },
    ]);
    expect(report.totalEstimatedCost).toBe(2.89);
    expect(sum(report.owners.map((row) => row.estimatedCost))).toBe(2.89);
  });

  it('leaves an unpriced owner without a cost, and gives it none of the hundredths', () => {
    const intervals = [
      hour('wg/a', 'office-hours', 'window', 1.005),
      { ...hour('wg/b', 'manual-pause', 'job', 0), pricePerHour: undefined, currency: undefined },
    ];
    const report = savingsReport(intervals, [], at(0), at(24));
    expect(report.owners.find((row) => row.owner === 'manual-pause')?.estimatedCost).toBeNull();
    expect(report.owners.find((row) => row.owner === 'office-hours')?.estimatedCost).toBe(
      report.totalEstimatedCost,
    );
  });
});
