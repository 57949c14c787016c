import type { Ownership, PausedInterval } from './ownership.js';

/** What `nightshift savings --json` prints. */
export interface SavingsReport {
  since: string;
  until: string;
  /** The currency of the estimates; null when no pause was priced (the policy has no `pricing:`). */
  currency: string | null;
  totalPausedHours: number;
  totalEstimatedCost: number | null;
  workspaces: WorkspaceSavings[];
  /** Hours priced in another currency than `currency` (the price table changed currency), left out of costs. */
  unpricedHours?: number;
}

export interface WorkspaceSavings {
  workgroup: string;
  workspace: string;
  workgroupId: string;
  workspaceId: string;
  pausedHours: number;
  estimatedCost: number | null;
}

const HOUR_MS = 3_600_000;

interface Stretch {
  key: string;
  workgroupId: string;
  workspaceId: string;
  workgroupName?: string | undefined;
  workspaceName?: string | undefined;
  from: number;
  to: number;
  pricePerHour?: number | undefined;
  currency?: string | undefined;
}

const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

/**
 * Owned paused time between `since` and `until`: closed intervals from the ledger's history and
 * the pauses nightshift still owns (confirmed ones; an intent is not yet a pause), each clipped
 * to the span. A workspace paused by a person is in neither, so it never counts. Costs use the
 * price recorded with each pause (the policy's price table when it was paused).
 */
export function savingsReport(
  intervals: readonly PausedInterval[],
  owned: Iterable<Ownership>,
  since: Date,
  until: Date,
): SavingsReport {
  const stretches: Stretch[] = [];
  for (const interval of intervals)
    stretches.push({ ...interval, from: Date.parse(interval.from), to: Date.parse(interval.to) });
  for (const record of owned) {
    if (record.state !== 'confirmed' || !record.pausedAt) continue;
    stretches.push({ ...record, from: Date.parse(record.pausedAt), to: until.getTime() });
  }
  const byCurrency = new Map<string, number>();
  const clipped = stretches.flatMap((stretch) => {
    const hours = (Math.min(stretch.to, until.getTime()) - Math.max(stretch.from, since.getTime())) / HOUR_MS;
    if (!(hours > 0)) return [];
    if (stretch.currency && stretch.pricePerHour !== undefined)
      byCurrency.set(stretch.currency, (byCurrency.get(stretch.currency) ?? 0) + hours);
    return [{ stretch, hours }];
  });
  // one currency per report: the one most hours were priced in
  const currency = [...byCurrency.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  const rows = new Map<string, WorkspaceSavings & { cost: number; priced: boolean }>();
  let unpriced = 0;
  for (const { stretch, hours } of clipped) {
    let row = rows.get(stretch.key);
    if (!row) {
      row = {
        workgroup: stretch.workgroupName ?? stretch.workgroupId,
        workspace: stretch.workspaceName ?? stretch.workspaceId,
        workgroupId: stretch.workgroupId,
        workspaceId: stretch.workspaceId,
        pausedHours: 0,
        estimatedCost: null,
        cost: 0,
        priced: false,
      };
      rows.set(stretch.key, row);
    }
    row.pausedHours += hours;
    if (stretch.pricePerHour !== undefined && stretch.currency === currency) {
      row.cost += hours * stretch.pricePerHour;
      row.priced = true;
    } else if (stretch.currency && stretch.currency !== currency) unpriced += hours;
  }
  const workspaces = [...rows.values()]
    .map(({ cost, priced, ...row }) => ({
      ...row,
      pausedHours: round(row.pausedHours, 2),
      estimatedCost: priced ? round(cost, 2) : null,
    }))
    .sort(
      (a, b) =>
        b.pausedHours - a.pausedHours ||
        a.workgroup.localeCompare(b.workgroup) ||
        a.workspace.localeCompare(b.workspace),
    );
  const totalHours = clipped.reduce((sum, { hours }) => sum + hours, 0);
  const totalCost = [...rows.values()].reduce((sum, row) => sum + row.cost, 0);
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    currency,
    totalPausedHours: round(totalHours, 2),
    totalEstimatedCost: currency === null ? null : round(totalCost, 2),
    workspaces,
    ...(unpriced > 0 ? { unpricedHours: round(unpriced, 2) } : {}),
  };
}
