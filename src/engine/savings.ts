import type { OwnerKind, Ownership, PausedInterval } from './ownership.js';

/** What `nightshift savings --json` prints. */
export interface SavingsReport {
  since: string;
  until: string;
  /** The currency of the estimates; null when no pause was priced (the policy has no `pricing:`). */
  currency: string | null;
  totalPausedHours: number;
  totalEstimatedCost: number | null;
  /** Per workspace, most hours first; the rows add up to the totals exactly (see `apportion`). */
  workspaces: WorkspaceSavings[];
  /** Per window or job whose pauses they were, most hours first; the rows add up to the totals too. */
  owners: OwnerSavings[];
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

export interface OwnerSavings {
  owner: string;
  kind: OwnerKind;
  pausedHours: number;
  estimatedCost: number | null;
}

const HOUR_MS = 3_600_000;
/** Hours and costs are reported to the hundredth. */
const PLACES = 2;

/** Owned paused time of one workspace within a span, unrounded. */
export interface PausedStretch {
  key: string;
  workgroupId: string;
  workspaceId: string;
  /** Names as the API listed them when the workspace was paused; the ids when none were recorded. */
  workgroup: string;
  workspace: string;
  owner: string;
  ownerKind: OwnerKind;
  hours: number;
  /** In the span's currency; undefined when the pause was not priced in it. */
  cost: number | undefined;
}

/** Owned paused time within a span, stretch by stretch, unrounded: what every savings figure adds up. */
export interface PausedTime {
  currency: string | null;
  stretches: PausedStretch[];
  /** Hours priced in another currency than `currency`. */
  unpricedHours: number;
}

/** What a stretch is cut from: a closed interval or a pause still owned, with its times in ms. */
type Span = Pick<
  PausedInterval,
  | 'key'
  | 'workgroupId'
  | 'workspaceId'
  | 'workgroupName'
  | 'workspaceName'
  | 'owner'
  | 'ownerKind'
  | 'pricePerHour'
  | 'currency'
> & { from: number; to: number };

/**
 * Owned paused time between `since` and `until`: closed intervals from the ledger's history and
 * the pauses nightshift still owns (confirmed ones; an intent is not yet a pause), each clipped
 * to the span. A workspace paused by a person is in neither, so it never counts. Costs use the
 * price recorded with each pause (the policy's price table when it was paused), in `currency`:
 * by default the one most hours were priced in.
 */
export function pausedTime(
  intervals: readonly PausedInterval[],
  owned: Iterable<Ownership>,
  since: Date,
  until: Date,
  currency?: string | null,
): PausedTime {
  const spans: Span[] = [];
  for (const interval of intervals)
    spans.push({ ...interval, from: Date.parse(interval.from), to: Date.parse(interval.to) });
  for (const record of owned) {
    if (record.state !== 'confirmed' || !record.pausedAt) continue;
    spans.push({ ...record, from: Date.parse(record.pausedAt), to: until.getTime() });
  }
  const byCurrency = new Map<string, number>();
  const clipped = spans.flatMap((span) => {
    const hours = (Math.min(span.to, until.getTime()) - Math.max(span.from, since.getTime())) / HOUR_MS;
    if (!(hours > 0)) return [];
    if (span.currency && span.pricePerHour !== undefined)
      byCurrency.set(span.currency, (byCurrency.get(span.currency) ?? 0) + hours);
    return [{ span, hours }];
  });
  // one currency per report: the one most hours were priced in
  const chosen =
    currency !== undefined
      ? currency
      : ([...byCurrency.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null);
  let unpricedHours = 0;
  const stretches = clipped.map(({ span, hours }): PausedStretch => {
    const priced = span.pricePerHour !== undefined && span.currency === chosen;
    if (!priced && span.currency && span.currency !== chosen) unpricedHours += hours;
    return {
      key: span.key,
      workgroupId: span.workgroupId,
      workspaceId: span.workspaceId,
      workgroup: span.workgroupName ?? span.workgroupId,
      workspace: span.workspaceName ?? span.workspaceId,
      owner: span.owner,
      ownerKind: span.ownerKind,
      hours,
      cost: priced ? hours * (span.pricePerHour ?? 0) : undefined,
    };
  });
  return { currency: chosen, stretches, unpricedHours };
}

/**
 * `values` rounded to `places` so that they add up to `total` (default: their sum, rounded): each
 * is rounded down, and the hundredths left over go to the values that lost the most by it (largest
 * remainder). Rounding each on its own lets a table's rows add up to a cent or more off its total.
 */
export function apportion(values: readonly number[], places = PLACES, total?: number): number[] {
  const unit = 10 ** places;
  const scaled = values.map((value) => value * unit);
  // a hair over an exact hundredth (binary fractions) is that hundredth, not one below it
  const floors = scaled.map((value) => Math.floor(value + 1e-9));
  const target = Math.round((total ?? values.reduce((sum, value) => sum + value, 0)) * unit);
  let left = target - floors.reduce((sum, value) => sum + value, 0);
  const order = scaled
    .map((value, index) => ({ index, remainder: value - (floors[index] ?? 0) }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  for (let i = 0; left > 0 && order.length > 0; i++, left--) {
    const entry = order[i % order.length] as (typeof order)[number];
    floors[entry.index] = (floors[entry.index] ?? 0) + 1;
  }
  for (let i = order.length - 1; left < 0 && i >= 0; i--) {
    const entry = order[i] as (typeof order)[number];
    if ((floors[entry.index] ?? 0) > 0) {
      floors[entry.index] = (floors[entry.index] ?? 0) - 1;
      left++;
    }
  }
  return floors.map((value) => value / unit);
}

/** Totals of a span's time (rounded): the hours, and the cost when `currency` is known. */
export function savingsTotal(time: PausedTime): { pausedHours: number; estimatedCost: number | null } {
  const hours = time.stretches.reduce((sum, stretch) => sum + stretch.hours, 0);
  const cost = time.stretches.reduce((sum, stretch) => sum + (stretch.cost ?? 0), 0);
  return {
    pausedHours: apportion([hours])[0] ?? 0,
    estimatedCost: time.currency === null ? null : (apportion([cost])[0] ?? 0),
  };
}

/**
 * The stretches summed by `groupOf`, most hours first, rounded so the groups add up to the
 * totals (`totals`, default the stretches' own). A group none of whose time was priced has no cost.
 */
export function savingsBy<G>(
  stretches: readonly PausedStretch[],
  groupOf: (stretch: PausedStretch) => { key: string; group: G },
  totals: { pausedHours: number; estimatedCost: number | null },
): (G & { pausedHours: number; estimatedCost: number | null })[] {
  const sums = new Map<string, { group: G; hours: number; cost: number; priced: boolean }>();
  for (const stretch of stretches) {
    const { key, group } = groupOf(stretch);
    const sum = sums.get(key) ?? { group, hours: 0, cost: 0, priced: false };
    sum.hours += stretch.hours;
    if (stretch.cost !== undefined) {
      sum.cost += stretch.cost;
      sum.priced = true;
    }
    sums.set(key, sum);
  }
  const groups = [...sums.values()];
  const hours = apportion(
    groups.map((sum) => sum.hours),
    PLACES,
    totals.pausedHours,
  );
  // the cost is shared out among the groups with a price alone: the others show none
  const priced = groups.filter((sum) => sum.priced);
  const costs =
    totals.estimatedCost === null
      ? []
      : apportion(
          priced.map((sum) => sum.cost),
          PLACES,
          totals.estimatedCost,
        );
  let pricedIndex = 0;
  return groups
    .map((sum, i) => ({
      ...sum.group,
      pausedHours: hours[i] ?? 0,
      estimatedCost: sum.priced ? (costs[pricedIndex++] ?? 0) : null,
    }))
    .sort((a, b) => b.pausedHours - a.pausedHours);
}

/** `nightshift savings`: the span's owned paused time per workspace and per owner, and in total. */
export function savingsReport(
  intervals: readonly PausedInterval[],
  owned: Iterable<Ownership>,
  since: Date,
  until: Date,
): SavingsReport {
  const time = pausedTime(intervals, owned, since, until);
  const total = savingsTotal(time);
  const workspaces = savingsBy(
    time.stretches,
    (s) => ({
      key: s.key,
      group: {
        workgroup: s.workgroup,
        workspace: s.workspace,
        workgroupId: s.workgroupId,
        workspaceId: s.workspaceId,
      },
    }),
    total,
  ).sort(
    (a, b) =>
      b.pausedHours - a.pausedHours ||
      a.workgroup.localeCompare(b.workgroup) ||
      a.workspace.localeCompare(b.workspace),
  );
  const owners = savingsBy(
    time.stretches,
    (s) => ({ key: `${s.ownerKind}:${s.owner}`, group: { owner: s.owner, kind: s.ownerKind } }),
    total,
  ).sort((a, b) => b.pausedHours - a.pausedHours || a.owner.localeCompare(b.owner));
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    currency: time.currency,
    totalPausedHours: total.pausedHours,
    totalEstimatedCost: total.estimatedCost,
    workspaces,
    owners,
    ...(time.unpricedHours > 0 ? { unpricedHours: apportion([time.unpricedHours])[0] ?? 0 } : {}),
  };
}
