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
 * What the policy layer needs to know about an action. Action modules under `jobs/` declare one
 * beside their code; the policy layer never imports them, and the loader takes the registry as a
 * parameter.
 */
export interface ActionSpec<Params extends z.ZodType = z.ZodType> {
  /** The name jobs use in `action:`; kebab-case. */
  readonly name: string;
  /** One line for listings and the JSON Schema. */
  readonly description: string;
  /** A destructive action deletes or overwrites data; a job using it must set `confirm: true`. */
  readonly destructive: boolean;
  readonly scope: ActionScope;
  /**
   * A `workgroup` or `workspace` action that can also act on what its `with:` names (e.g. cloud
   * provider ids) may leave `target` out; without this, a target is required.
   */
  readonly targetOptional?: boolean;
  /**
   * The action lists the organization's users: the one operation authenticated by the bearer
   * token (`NIGHTSHIFT_BEARER_TOKEN`) rather than the API key, so a process that will run it
   * must have the token.
   */
  readonly needsBearerToken?: boolean;
  /**
   * Parameters whose value names another job of the same policy, with the action that job must
   * use: resume's `onlyPausedBy` names a `pause` job. Validation refuses a name that is no job of
   * the policy, or a job using another action, at the parameter's value. Default: none.
   */
  readonly jobReferences?: Readonly<Record<string, { readonly action: string }>>;
  /** The schema of the job's `with:`; strict, so a misspelt parameter is an error. */
  readonly params: Params;
  /** A complete policy file using the action; a test checks that it validates. */
  readonly example: string;
}

/** The actions a policy may use, by name. */
export type ActionRegistry = ReadonlyMap<string, ActionSpec>;

/** A registry from specs; a name given twice is a programming error and throws. */
export function createActionRegistry(specs: readonly ActionSpec[]): ActionRegistry {
  const registry = new Map<string, ActionSpec>();
  for (const spec of specs) {
    if (registry.has(spec.name)) throw new Error(`action "${spec.name}" is registered twice`);
    registry.set(spec.name, spec);
  }
  return registry;
}
