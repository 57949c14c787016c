import { type SavingsReport, savingsReport } from '../../../engine/index.js';
import type { SavingsAmount, SavingsView } from '../model.js';
import type { ConsoleSources } from './sources.js';

const DAY_MS = 86_400_000;
/** The chart's span by default, and the longest one asked for. */
export const SAVINGS_DAYS = 30;
export const MAX_SAVINGS_DAYS = 400;

const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

function byWorkgroup(report: SavingsReport, currency: string | null): Map<string, SavingsAmount> {
  const sums = new Map<string, { hours: number; cost: number; priced: boolean }>();
  for (const row of report.workspaces) {
    const sum = sums.get(row.workgroup) ?? { hours: 0, cost: 0, priced: false };
    sum.hours += row.pausedHours;
    // a day priced in another currency than the span's is left out of costs, as `savings` does
    if (row.estimatedCost !== null && report.currency === currency) {
      sum.cost += row.estimatedCost;
      sum.priced = true;
    }
    sums.set(row.workgroup, sum);
  }
  return new Map(
    [...sums].map(([name, sum]) => [
      name,
      { pausedHours: round(sum.hours, 2), estimatedCost: sum.priced ? round(sum.cost, 2) : null },
    ]),
  );
}

/**
 * `/api/savings`: owned paused hours and their estimated cost per UTC day over the last `days`
 * days, per workgroup and in total. Every figure comes from `savingsReport`, the function
 * `nightshift savings` prints, over the same ledger: the total is what
 * `nightshift savings --since <since>` reports at the same instant.
 */
export async function savingsView(sources: ConsoleSources, days = SAVINGS_DAYS): Promise<SavingsView> {
  const now = sources.now?.() ?? new Date();
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const since = new Date(today - (days - 1) * DAY_MS);
  const [intervals, owned] = await Promise.all([
    sources.state.ledger.intervalsSince(since),
    sources.state.ledger.all(),
  ]);
  const records = [...owned.values()];
  const total = savingsReport(intervals, records, since, now);
  const dayRows: SavingsView['days'] = [];
  for (let start = since.getTime(); start <= today; start += DAY_MS) {
    const end = Math.min(start + DAY_MS, now.getTime());
    const overlapping = intervals.filter((i) => Date.parse(i.to) > start && Date.parse(i.from) < end);
    const report = savingsReport(overlapping, records, new Date(start), new Date(end));
    const groups = byWorkgroup(report, total.currency);
    dayRows.push({
      date: new Date(start).toISOString().slice(0, 10),
      pausedHours: report.totalPausedHours,
      estimatedCost:
        total.currency === null
          ? null
          : round(
              [...groups.values()].reduce((s, g) => s + (g.estimatedCost ?? 0), 0),
              2,
            ),
      byWorkgroup: Object.fromEntries(groups),
    });
  }
  const workgroups = [...byWorkgroup(total, total.currency)]
    .map(([workgroup, amount]) => ({ workgroup, ...amount }))
    .sort((a, b) => b.pausedHours - a.pausedHours || a.workgroup.localeCompare(b.workgroup));
  return {
    generatedAt: now.toISOString(),
    since: since.toISOString(),
    until: now.toISOString(),
    currency: total.currency,
    total: { pausedHours: total.totalPausedHours, estimatedCost: total.totalEstimatedCost },
    days: dayRows,
    workgroups,
  };
}
