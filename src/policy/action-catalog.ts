import type { z } from 'zod';

/**
 * What an action acts on, which decides the job's `target`:
 * - `workspace`: each selected workspace (`selectTargets`); a target is required.
 * - `workgroup`: each selected workgroup, e.g. its allow list or cloud provider (`selectWorkgroups`);
 *   a target is required.
 * - `none`: what its `with` parameters name; a target is refused, since it would be ignored.
 */
export type ActionScope = 'workspace' | 'workgroup' | 'none';

/**
 * What validating a job needs to know of its action: the port through which the policy layer sees
 * actions. The engine's `Action` (src/engine/action.ts) declares what an action is and satisfies
 * this structurally; the loader takes the catalog as a parameter and never imports an action.
 */
export interface ActionCatalogEntry {
  /** What jobs write in `action:`. */
  readonly name: string;
  /** The action's branch of the JSON Schema says this. */
  readonly description: string;
  /** A job using a destructive action must set `confirm: true`. */
  readonly destructive: boolean;
  /** Whether a job must, or must not, have a `target`. */
  readonly scope: ActionScope;
  /** A `workgroup` or `workspace` action that may leave `target` out. */
  readonly targetOptional?: boolean;
  /** Parameters whose value must name a job of the policy using the given action. */
  readonly jobReferences?: Readonly<Record<string, { readonly action: string }>>;
  /** The schema a job's `with:` is parsed with. */
  readonly params: z.ZodType;
  /**
   * The longest the action's waits may keep one run going, given the job's parsed `with:`, and
   * what makes it up in words (`waitReady, 60m by default`): `validate` warns when the job's
   * `timeout` is not longer. Default: the action does not wait.
   */
  longestWait?(params: unknown): LongestWait | undefined;
}

/** How long an action's waits may take, and why: see `ActionCatalogEntry.longestWait`. */
export interface LongestWait {
  readonly ms: number;
  readonly why: string;
}

/** The actions a policy may use, by name. */
export type ActionCatalog = ReadonlyMap<string, ActionCatalogEntry>;

/** A catalog from entries, keeping their type; a name given twice is a programming error and throws. */
export function createActionCatalog<Entry extends ActionCatalogEntry>(
  entries: readonly Entry[],
): ReadonlyMap<string, Entry> {
  const catalog = new Map<string, Entry>();
  for (const entry of entries) {
    if (catalog.has(entry.name)) throw new Error(`action "${entry.name}" is registered twice`);
    catalog.set(entry.name, entry);
  }
  return catalog;
}
