import { Ajv, type ValidateFunction } from 'ajv';
import { z } from 'zod';

export type ParseOutcome<T> = { success: true; data: T } | { success: false; where: string; message: string };

/**
 * Parses an operation's Result with its zod schema, fast.
 *
 * zod rebuilds every object it parses, which for list-workgroups of a 10,000-workspace fleet
 * costs more than twice the JSON.parse of the body. A schema with no transforms returns its
 * input unchanged, so for those the same schema is compiled (via its generated JSON Schema)
 * into an ajv validator that only checks, and the input is returned as the parsed value. zod
 * stays the single source of truth; it still parses schemas with transforms and explains
 * every rejection.
 */
export function createResultParser<S extends z.ZodType>(
  schema: S,
): (input: unknown) => ParseOutcome<z.output<S>> {
  const check = compileCheck(schema);
  return (input) => {
    if (check?.(input)) return { success: true, data: input as z.output<S> };
    const parsed = schema.safeParse(input);
    if (parsed.success) return { success: true, data: parsed.data };
    const issue = parsed.error.issues[0];
    return {
      success: false,
      where: issue && issue.path.length > 0 ? `Result.${issue.path.join('.')}` : 'Result',
      message: issue?.message ?? 'invalid',
    };
  };
}

/** One parser per result schema, built on its first use (or all at once by `ApiClient.prepare()`). */
const parsers = new Map<z.ZodType, (input: unknown) => ParseOutcome<unknown>>();

/** The parser of `schema`, compiled once per process. */
export function parserFor<S extends z.ZodType>(schema: S): (input: unknown) => ParseOutcome<z.output<S>> {
  let parser = parsers.get(schema);
  if (!parser) {
    parser = createResultParser(schema);
    parsers.set(schema, parser);
  }
  return parser as (input: unknown) => ParseOutcome<z.output<S>>;
}

const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false });

function compileCheck(schema: z.ZodType): ValidateFunction | undefined {
  let jsonSchema: Record<string, unknown>;
  try {
    jsonSchema = z.toJSONSchema(schema, { io: 'output', target: 'draft-07', unrepresentable: 'throw' });
  } catch {
    // a transform cannot be expressed as JSON Schema: zod parses this one itself
    return undefined;
  }
  return ajv.compile(jsonSchema);
}
