import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Ownership } from './ownership.js';
import type { TargetRecord } from './summary.js';
import type { DriftStreak } from './window-state.js';

/**
 * What one reconciliation did to the fleet: the `acted` notification's figures. The cost is an
 * estimate from the prices the ownership ledger recorded with each pause (the policy's `pricing:`
 * then), as `nightshift savings` reads them; a pause without a price is counted, never guessed.
 */
export const WindowActedSchema = z.object({
  paused: z.number().int().nonnegative(),
  resumed: z.number().int().nonnegative(),
  /** Pauses and resumes the reconciliation set out to make and did not. */
  failed: z.number().int().nonnegative(),
  /** What an hour of the workspaces it paused costs, in `currency`; null when none was priced. */
  hourlyCostAvoided: z.number().nonnegative().nullable(),
  currency: z.string().nullable(),
  /** Workspaces it paused whose hour has no price (no `pricing:`, or a type it does not list). */
  unpriced: z.number().int().nonnegative(),
});
export type WindowActed = z.infer<typeof WindowActedSchema>;

/** A drift streak as a run's evidence reports it. */
export const DriftStreakEvidenceSchema = z.object({
  /** The streak's identity: which workspaces, since when. */
  id: z.string(),
  /** Consecutive reconciliations that left these workspaces drifting, this one included. */
  reconciliations: z.number().int().positive(),
  workspaces: z.number().int().positive(),
  since: z.string(),
});

/**
 * A reconciliation's record in its summary (`evidence.window`): what it found, what it did and
 * the drift it left. Written by the reconcile-window action, read by notifications.
 */
export const WindowEvidenceSchema = z.object({
  up: z.boolean(),
  period: z.string(),
  workspaces: z.number().int().nonnegative(),
  /** Workspaces left different from what the window wants (held ones aside). */
  drift: z.number().int().nonnegative(),
  held: z.number().int().nonnegative(),
  /** Workspaces the reconciliation brought to the wanted state. */
  acted: z.number().int().nonnegative(),
  stranded: z.number().int().nonnegative(),
  done: WindowActedSchema,
  /** The drift streak this reconciliation continued or began; absent when it left no drift. */
  driftStreak: DriftStreakEvidenceSchema.optional(),
  /** The window's `driftPersistsAfter`: a streak this long is raised as `drift-persists`. */
  driftPersistsAfter: z.number().int().positive(),
});
export type WindowEvidence = z.infer<typeof WindowEvidenceSchema>;

/** How a record's target was acted on, by the reconciliation's decision for it. */
export interface ActedTarget {
  readonly record: TargetRecord;
  /** What the reconciliation set out to do; `pause` for a pause an earlier execution of the run made. */
  readonly act: 'pause' | 'resume' | undefined;
}

/**
 * Counts what a reconciliation did from its targets' records, and prices its pauses with the
 * ledger's records (`owned`, read after the pauses were made).
 */
export function windowActed(
  targets: readonly ActedTarget[],
  owned: ReadonlyMap<string, Ownership>,
): WindowActed {
  const acted: WindowActed = {
    paused: 0,
    resumed: 0,
    failed: 0,
    hourlyCostAvoided: null,
    currency: null,
    unpriced: 0,
  };
  for (const { record, act } of targets) {
    if (act === undefined) continue;
    if (record.outcome === 'failed') acted.failed += 1;
    if (record.outcome !== 'succeeded') continue;
    if (act === 'resume') {
      acted.resumed += 1;
      continue;
    }
    acted.paused += 1;
    const owner = owned.get(record.key);
    const price = owner?.pricePerHour;
    // one currency per estimate: a pause priced in another (the table changed) is not added to it
    if (price === undefined || !owner?.currency || (acted.currency ?? owner.currency) !== owner.currency) {
      acted.unpriced += 1;
      continue;
    }
    acted.currency = owner.currency;
    acted.hourlyCostAvoided = (acted.hourlyCostAvoided ?? 0) + price;
  }
  if (acted.hourlyCostAvoided !== null)
    acted.hourlyCostAvoided = Math.round(acted.hourlyCostAvoided * 100) / 100;
  return acted;
}

/** The same workspaces, in any order, make the same identity; a short hash keeps the state small. */
function driftSetId(keys: readonly string[]): string {
  return createHash('sha256')
    .update([...keys].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
}

/**
 * The drift streak after a reconciliation that left `drifting` workspaces different from what
 * the window wants: the previous one continued when they are the same workspaces, a new one when
 * they differ, none when nothing drifts.
 */
export function nextDriftStreak(
  previous: DriftStreak | undefined,
  drifting: readonly string[],
  now: Date,
): DriftStreak | undefined {
  if (drifting.length === 0) return undefined;
  const set = driftSetId(drifting);
  if (previous?.set === set) return { ...previous, count: previous.count + 1 };
  return { set, count: 1, workspaces: drifting.length, since: now.toISOString() };
}

/** A streak as the run's evidence reports it. */
export function driftStreakEvidence(streak: DriftStreak): z.infer<typeof DriftStreakEvidenceSchema> {
  return {
    id: `${streak.set}@${streak.since}`,
    reconciliations: streak.count,
    workspaces: streak.workspaces,
    since: streak.since,
  };
}
