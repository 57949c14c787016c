import { z } from 'zod';

/**
 * Consecutive reconciliations that left the same workspaces different from what the window wants
 * (held ones aside): drift it did not or could not fix. A different set of workspaces starts a
 * new streak; none drifting ends it.
 */
export const DriftStreakSchema = z.object({
  /** A hash of the drifting workspaces' keys: the same set, the same streak. */
  set: z.string(),
  count: z.number().int().positive(),
  workspaces: z.number().int().positive(),
  /** When its first reconciliation finished (ISO, UTC). */
  since: z.string(),
});
export type DriftStreak = z.infer<typeof DriftStreakSchema>;

/** What a window's reconciliations remember between runs. */
export const WindowStateSchema = z.object({
  /**
   * The uptime period the window last applied, `up@<edge>` or `down@<edge>` (`always` when the
   * uptime never changes): a reconciliation in a new period acts on its edge, later ones only on
   * what the edge left pending (and, with `enforce`, on drift).
   */
  period: z.string(),
  /** Workspaces the period's edge decided to act on and not yet done, by target key. */
  pending: z.array(z.string()),
  /** What the last reconciliation found. */
  workspaces: z.number().int().nonnegative().optional(),
  drift: z.number().int().nonnegative().optional(),
  held: z.number().int().nonnegative().optional(),
  /** Workspaces of its target that nightshift paused and no longer owns (see `strandedOf`). */
  stranded: z.number().int().nonnegative().optional(),
  driftStreak: DriftStreakSchema.optional(),
});
export type WindowState = z.infer<typeof WindowStateSchema>;

export interface WindowStateStore {
  get(window: string): Promise<WindowState | undefined>;
  save(window: string, state: WindowState): Promise<void>;
}
