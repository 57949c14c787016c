import { z } from 'zod';
import type { PolicyProblem } from './errors.js';
import { labelled, pathKey, type ValuePath } from './paths.js';
import { DURATION_NEEDS_UNIT } from './schema.js';
import { didYouMean, listNames } from './suggest.js';
import type { YamlSource } from './yaml/index.js';

/** A problem at the node of `path` in `source`. */
export function problemAt(
  source: YamlSource,
  path: ValuePath,
  message: string,
  anchor: 'key' | 'value' = 'value',
  labelPath: ValuePath = path,
): PolicyProblem {
  return { ...source.locate(path, anchor), message: labelled(labelPath, message) };
}

/** A warning at the node of `path`: the policy stays valid. */
export function warningAt(
  source: YamlSource,
  path: ValuePath,
  message: string,
  anchor: 'key' | 'value' = 'value',
): PolicyProblem {
  return { ...problemAt(source, path, message, anchor), severity: 'warning' };
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'a list',
  object: 'a map',
  record: 'a map',
};

/** What a YAML value is, in the words of the messages; never the value itself, which may be a secret. */
export function kindOf(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'true or false';
  if (typeof value === 'object') return 'a map';
  return typeof value;
}

function plural(count: number | bigint, one: string, many: string): string {
  return `${count} ${Number(count) === 1 ? one : many}`;
}

function lastKey(path: readonly PropertyKey[] | undefined): string {
  return String(path?.[path.length - 1] ?? '');
}

/** Our wording for issues whose schema gave no message of its own. */
function describe(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined && (issue.path?.length ?? 0) > 0)
        return `missing required key "${lastKey(issue.path)}"`;
      return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${kindOf(issue.input)}`;
    case 'invalid_value':
      if (issue.input === undefined && (issue.path?.length ?? 0) > 0)
        return `missing required key "${lastKey(issue.path)}"`;
      return issue.values.length === 1
        ? `expected ${String(issue.values[0])}`
        : `expected one of: ${issue.values.map(String).join(', ')}`;
    case 'too_small':
      if (issue.origin === 'array' || issue.origin === 'set')
        return `must list at least ${plural(issue.minimum, 'entry', 'entries')}`;
      if (issue.origin === 'string')
        return Number(issue.minimum) === 1
          ? 'must not be empty'
          : `must be at least ${plural(issue.minimum, 'character', 'characters')}`;
      return issue.inclusive === false
        ? `must be greater than ${issue.minimum}`
        : `must be at least ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'array' || issue.origin === 'set')
        return `must list at most ${plural(issue.maximum, 'entry', 'entries')}`;
      if (issue.origin === 'string')
        return `must be at most ${plural(issue.maximum, 'character', 'characters')}`;
      return issue.inclusive === false
        ? `must be less than ${issue.maximum}`
        : `must be at most ${issue.maximum}`;
    case 'invalid_format':
      return issue.format === 'regex' && issue.pattern
        ? `does not match the pattern ${issue.pattern}`
        : `expected a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'invalid_union':
      return 'does not match any of the allowed forms';
    case 'invalid_key':
      return issue.issues[0]?.message ?? 'invalid key';
    case 'invalid_element':
      return 'invalid entry';
    case 'unrecognized_keys':
      return 'unknown key';
    default:
      return 'invalid value';
  }
}

export interface ParseOptions {
  /** Where the parsed value sits in the file, to locate issues and label messages. */
  readonly at: ValuePath;
  /** The end of the message for an unknown key where the map takes no keys at all. */
  readonly noKeysHint?: string;
}

/**
 * Parses with a zod schema and turns every issue into a located problem: an unknown key points at
 * the key with a did-you-mean, a missing key at the map that lacks it, anything else at the value.
 */
export function parseWithProblems<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  source: YamlSource,
  options: ParseOptions,
): { data: z.output<Schema> | undefined; problems: PolicyProblem[] } {
  // Without a per-parse error map zod takes its compiled fast path, twice as fast; the map is
  // only needed to word the issues of a value that fails.
  const quick = schema.safeParse(value);
  if (quick.success) return { data: quick.data, problems: [] };
  const knownKeys = new Map<string, readonly string[]>();
  const result = schema.safeParse(value, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys' && issue.inst instanceof z.ZodObject) {
        knownKeys.set(pathKey(issue.path ?? []), Object.keys(issue.inst.shape));
      }
      return describe(issue);
    },
  });
  if (result.success) return { data: result.data, problems: [] };

  const issues = result.error.issues.flatMap(narrowUnion);
  const problems: PolicyProblem[] = [];
  // A misspelt key also shows up as the key it should have been, missing: report only the misspelling.
  const suggested = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const path = [...options.at, ...issue.path];
    const known = knownKeys.get(pathKey(issue.path)) ?? [];
    for (const key of issue.keys) {
      const suggestion = didYouMean(key, known);
      if (suggestion !== undefined) suggested.add(pathKey([...path, suggestion]));
      const hint =
        known.length === 0
          ? `; ${options.noKeysHint ?? 'no keys are allowed here'}`
          : suggestion !== undefined
            ? `; did you mean "${suggestion}"?`
            : ` (expected one of: ${listNames(known)})`;
      problems.push(problemAt(source, [...path, key], `unknown key "${key}"${hint}`, 'key', path));
    }
  }
  for (const issue of issues) {
    const path = [...options.at, ...issue.path];
    if (issue.code === 'unrecognized_keys') continue;
    if (issue.code === 'invalid_key') {
      problems.push(problemAt(source, path, issue.message, 'key'));
    } else if (isMissing(value, issue.path)) {
      if (!suggested.has(pathKey(path)))
        problems.push(problemAt(source, path.slice(0, -1), issue.message, 'key'));
    } else {
      problems.push(problemAt(source, path, issue.message));
    }
  }
  return { data: undefined, problems };
}

/**
 * A union whose input has the shape of exactly one of its forms (a map given for "a name or a
 * selector") reports that form's own issues, which say what is wrong inside it; so does a number
 * given where one form is a duration (it lacks a unit); otherwise the union's message, which lists
 * the forms.
 */
function narrowUnion(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
  const unitless = issue.errors.find((branch) =>
    branch.some((inner) => inner.path.length === 0 && inner.message.startsWith(DURATION_NEEDS_UNIT)),
  );
  if (unitless) return unitless.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
  const fitting = issue.errors.filter(
    (branch) =>
      branch.length > 0 &&
      !branch.some(
        (inner) =>
          inner.path.length === 0 && (inner.code === 'invalid_type' || inner.code === 'invalid_value'),
      ),
  );
  const [only] = fitting;
  if (fitting.length !== 1 || !only) return [issue];
  return only.flatMap((inner) => narrowUnion({ ...inner, path: [...issue.path, ...inner.path] }));
}

/** Whether `path` names a key its parent map does not have. */
function isMissing(root: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return false;
  let parent: unknown = root;
  for (const segment of path.slice(0, -1)) {
    if (parent === null || typeof parent !== 'object') return false;
    parent = (parent as Record<PropertyKey, unknown>)[segment];
  }
  return (
    parent !== null &&
    typeof parent === 'object' &&
    !Array.isArray(parent) &&
    !(String(lastKey(path)) in parent)
  );
}
