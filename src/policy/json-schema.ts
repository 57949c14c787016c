import { z } from 'zod';
import type { ActionCatalog } from './action-catalog.js';
import { JobSchema, policySchema, WindowSchema } from './schema.js';

/** Where the committed schema lives, relative to the repository root; the config examples point at it. */
export const POLICY_SCHEMA_PATH = 'config/schema/policy.schema.json';

/**
 * The JSON Schema of policy files, for editors (yaml-language-server) to complete and check them.
 * Each action becomes one branch keyed on `action`, so `with:` completes that action's parameters.
 * It describes the file as written: durations are strings, `${VAR}`s are plain strings. Checks
 * that need the whole file (references, cron, time zones) are only in `nightshift validate`.
 */
export function policyJsonSchema(registry: ActionCatalog): Record<string, unknown> {
  const actions = [...registry.values()].sort((a, b) => a.name.localeCompare(b.name));
  const branches = actions.map((action) =>
    JobSchema.extend({
      action: z.literal(action.name).meta({ description: action.description }),
      // Required exactly when the action has required parameters, as the loader checks it.
      with: (action.params.safeParse({}).success ? action.params.optional() : action.params).meta({
        description: `Parameters of ${action.name}.`,
      }),
    }),
  );
  const [first, ...rest] = branches;
  const job =
    first === undefined
      ? JobSchema
      : rest.length === 0
        ? first
        : z.discriminatedUnion('action', [first, ...rest]);
  const schema = z.toJSONSchema(policySchema(job, WindowSchema), {
    target: 'draft-07',
    io: 'input',
    unrepresentable: 'any',
    // zod leaves out a `default` from .meta() on a schema with a transform (durations); editors show it.
    override: ({ zodSchema, jsonSchema }) => {
      const meta = z.globalRegistry.get(zodSchema);
      if (meta && 'default' in meta && jsonSchema.default === undefined) jsonSchema.default = meta.default;
    },
  });
  return {
    ...schema,
    // a policy schedules jobs, windows or both
    anyOf: [{ required: ['jobs'] }, { required: ['windows'] }],
    title: 'nightshift policy',
    description:
      'Scheduled jobs and windows for the Workspace Management API. Reference: docs/policy.md, docs/windows.md.',
  };
}
