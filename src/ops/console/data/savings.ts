import { apportion, type PausedTime, pausedTime, savingsBy, savingsTotal } from '../../../engine/index.js';
import type { SavingsAmount, SavingsView } from '../model.js';
import type { ConsoleSources } from './sources.js';

const DAY_MS = 86_400_000;
/** The chart's span by default, and the longest one asked for. */
export const SAVINGS_DAYS = 30;
export const MAX_SAVINGS_DAYS = 400;

const byWorkgroup = (s: { workgroup: string }) => ({ key: s.workgroup, group: { workgroup: s.workgroup } });

/**
 * `/api/savings`: owned paused hours and their estimated cost per UTC day over the last `days`
 * days, per workgroup, per window or job, and in total. Every figure comes from the functions
 * `nightshift savings` prints with, over the same ledger: the total is what
 * `nightshift savings --since <since>` reports at the same instant. Each table is rounded so its
 * rows add up to the total exactly (and a day's workgroups to the day).
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
  const span = pausedTime(intervals, records, since, now);
  const total = savingsTotal(span);
  const perDay: { date: string; time: PausedTime }[] = [];
  for (let start = since.getTime(); start <= today; start += DAY_MS) {
    const end = Math.min(start + DAY_MS, now.getTime());
    const overlapping = intervals.filter((i) => Date.parse(i.to) > start && Date.parse(i.from) < end);
    const time = pausedTime(overlapping, records, new Date(start), new Date(end), span.currency);
    perDay.push({ date: new Date(start).toISOString().slice(0, 10), time });
  }
  const sum = (time: PausedTime, of: 'hours' | 'cost') =>
    time.stretches.reduce((s, stretch) => s + (stretch[of] ?? 0), 0);
  const dayHours = apportion(
    perDay.map((day) => sum(day.time, 'hours')),
    2,
    total.pausedHours,
  );
  const dayCosts =
    total.estimatedCost === null
      ? []
      : apportion(
          perDay.map((day) => sum(day.time, 'cost')),
          2,
          total.estimatedCost,
        );
  const dayRows: SavingsView['days'] = perDay.map((day, i) => {
    const amount: SavingsAmount = {
      pausedHours: dayHours[i] ?? 0,
      estimatedCost: total.estimatedCost === null ? null : (dayCosts[i] ?? 0),
    };
    const groups = savingsBy(day.time.stretches, byWorkgroup, amount);
    return {
      date: day.date,
      ...amount,
      byWorkgroup: Object.fromEntries(
        groups.map(({ workgroup, ...figures }) => [workgroup, figures] as const),
      ),
    };
  });
  return {
    generatedAt: now.toISOString(),
    since: since.toISOString(),
    until: now.toISOString(),
    currency: span.currency,
    total,
    days: dayRows,
    workgroups: savingsBy(span.stretches, byWorkgroup, total).sort(
      (a, b) => b.pausedHours - a.pausedHours || a.workgroup.localeCompare(b.workgroup),
    ),
    owners: savingsBy(
      span.stretches,
      (s) => ({ key: `${s.ownerKind}:${s.owner}`, group: { owner: s.owner, kind: s.ownerKind } }),
      total,
    ).sort((a, b) => b.pausedHours - a.pausedHours || a.owner.localeCompare(b.owner)),
  };
}
