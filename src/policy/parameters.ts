import { z } from 'zod';
import type { ActionCatalog } from './action-catalog.js';
import { isMap, type RawMap } from './check.js';
import type { PolicyProblem, SourceLocation } from './errors.js';
import { interpolate, type PolicyEnv } from './interpolate.js';
import { parseWithProblems } from './issues.js';
import { pathKey, type ValuePath } from './paths.js';
import { listNames, suggestionSuffix } from './suggest.js';
import { readYaml, type YamlSource } from './yaml/index.js';
import { type Interpolation, sourceOf } from './yaml/source.js';
import { nullMap } from './yaml/walk.js';

/** A parameter's name: a key of the job's `with:`, as a person types it after `--with`. */
export const PARAMETER_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

/**
 * What a run was given on top of its job's `with:` (`nightshift run … --with key=value`), each
 * value as typed: a `${VAR}` in it stays a reference, resolved wherever the policy's own are (the
 * CLI checking the run, the worker running it), so a secret's value never travels with the run
 * and every record of it shows the reference.
 */
export const RunParametersSchema = z.record(z.string().regex(PARAMETER_NAME), z.string());
export type RunParameters = z.infer<typeof RunParametersSchema>;

/** The parameters of one job's run, for `LoadPolicyOptions.parameters`. */
export interface JobParameters {
  readonly job: string;
  readonly values: RunParameters;
}

/** What reading a parameter's value needs: the variables a policy may read. */
export interface ParameterOptions {
  readonly registry: ActionCatalog;
  readonly env: PolicyEnv;
  readonly allowEnv?: readonly string[] | undefined;
}

/** A parameter's value as the job's `with:` gets it, with the `${VAR}`s it read. */
interface ReadValue {
  readonly value: unknown;
  /** By `pathKey` below the parameter (the value itself: `''`). */
  readonly interpolated: ReadonlyMap<string, Interpolation>;
}

/** The paths under `['jobs', job, 'with', key]` for each key given: what the parameters replace. */
export function parameterPaths(parameters: JobParameters): (path: ValuePath) => boolean {
  const keys = new Set(Object.keys(parameters.values));
  return (path) =>
    path.length >= 4 &&
    path[0] === 'jobs' &&
    path[1] === parameters.job &&
    path[2] === 'with' &&
    keys.has(String(path[3]));
}

/**
 * The policy as read, with the parameters merged into the job's `with:`, each value read as YAML
 * would read it after `key:` in the file (a number, `true`, a list, a map) unless the action's
 * schema wants a string there, and its `${VAR}`s resolved from `env` and recorded as the file's
 * are, so the secrets rule and every message treat them alike. What `checkPolicy` then checks is
 * a job the file could have declared. A parameter the action does not take, or whose value it
 * refuses, is a problem at the job, naming the parameter (`--with backupId=…: …`); the merge is
 * then left undone.
 */
export function withParameters(
  source: YamlSource,
  parameters: JobParameters,
  options: ParameterOptions,
): { source: YamlSource; problems: PolicyProblem[] } {
  const root = source.value as RawMap;
  const jobs = isMap(root.jobs) ? root.jobs : {};
  const job = jobs[parameters.job];
  const keys = Object.keys(parameters.values);
  if (keys.length === 0) return { source, problems: [] };
  if (job === undefined) {
    const windows = isMap(root.windows) ? root.windows : {};
    if (!(parameters.job in windows)) return { source, problems: [] };
    const at = source.locate(['windows', parameters.job], 'key');
    return {
      source,
      problems: [{ ...at, message: `--with: window "${parameters.job}" takes no parameters` }],
    };
  }
  const action = isMap(job) && typeof job.action === 'string' ? options.registry.get(job.action) : undefined;
  // a job the file gets wrong this way has its problems told by the check itself
  if (!isMap(job) || !action || (job.with !== undefined && !isMap(job.with))) return { source, problems: [] };
  const at = source.locate(['jobs', parameters.job], 'key');
  const shape =
    action.params instanceof z.ZodObject ? (action.params.shape as Record<string, z.ZodType>) : {};
  const problems: PolicyProblem[] = [];
  const values = new Map<string, ReadValue>();
  for (const key of keys) {
    const text = parameters.values[key] as string;
    const problem = (message: string) =>
      problems.push({ ...at, message: `--with ${key}=${text}: ${message}` });
    const schema = shape[key];
    if (!schema) {
      const known = Object.keys(shape);
      problem(
        known.length === 0
          ? `action "${action.name}" takes no parameters`
          : `action "${action.name}" has no parameter "${key}"${suggestionSuffix(key, known)} (its parameters: ${listNames(known)})`,
      );
      continue;
    }
    const read = readValue(text, schema, key, options);
    if ('problem' in read) {
      problem(read.problem);
      continue;
    }
    const parsed = parseWithProblems(schema, read.value, locatedAt(at), { at: [] });
    for (const { message } of parsed.problems) problem(message);
    if (parsed.problems.length === 0) values.set(key, read);
  }
  if (problems.length > 0) return { source, problems };
  return { source: merged(source, parameters.job, values, parameterPaths(parameters)), problems: [] };
}

/**
 * The value as YAML reads it, or the text itself where the schema takes that and not the YAML
 * reading (`backupId=123` is the string a backup id is, `vertices=123` the number a count is), or
 * where YAML cannot read it at all (`workspace=*`, which YAML takes for an alias).
 */
function readValue(
  text: string,
  schema: z.ZodType,
  key: string,
  options: ParameterOptions,
): ReadValue | { problem: string } {
  const plain = interpolate(text, options.env, new Set(options.allowEnv));
  if (!plain.ok) return { problem: plain.message };
  const asText: ReadValue = {
    value: plain.value,
    interpolated: new Map(plain.interpolated ? [['', { template: text, reads: plain.reads }]] : []),
  };
  const read = readYaml(text, `--with ${key}`, options.env, { allowEnv: options.allowEnv });
  if (read.problems.length > 0) return asText;
  const asYaml: ReadValue = { value: read.value, interpolated: interpolationsOf(read) };
  if (typeof read.value === 'string' || schema.safeParse(read.value).success) return asYaml;
  return schema.safeParse(plain.value).success ? asText : asYaml;
}

/** A read value's interpolated strings by `pathKey` below it; the value itself is `''`. */
function interpolationsOf(read: YamlSource): Map<string, Interpolation> {
  const found = new Map<string, Interpolation>();
  for (const below of read.interpolatedBelow([])) {
    const path = below.length === 1 && below[0] === '' ? [] : below;
    found.set(pathKey(path), { template: read.templateOf(path) ?? '', reads: read.readsAt(path) });
  }
  return found;
}

/** A source placing everything at `at`: a parameter's problems are the job's. */
function locatedAt(at: SourceLocation): YamlSource {
  return sourceOf(at.file, undefined, [], () => at, new Map());
}

/**
 * `source` with `values` in the job's `with:`. Their paths are placed at the job, their `${VAR}`s
 * replace what the file's values there read, and a variable the file's values there could not
 * read (reported as a warning by `unsetFor`) is no problem any more: nothing reads it.
 */
function merged(
  source: YamlSource,
  job: string,
  values: ReadonlyMap<string, ReadValue>,
  replaced: (path: ValuePath) => boolean,
): YamlSource {
  const root = source.value as RawMap;
  const jobs = root.jobs as RawMap;
  const document = jobs[job] as RawMap;
  const given = Object.assign(nullMap(), document.with as RawMap | undefined);
  const interpolated = new Map<string, Interpolation>();
  for (const path of source.interpolatedBelow([]))
    if (!replaced(path))
      interpolated.set(pathKey(path), {
        template: source.templateOf(path) ?? '',
        reads: source.readsAt(path),
      });
  for (const [key, { value, interpolated: below }] of values) {
    given[key] = value;
    for (const [rest, interpolation] of below)
      interpolated.set(
        pathKey(['jobs', job, 'with', key]) + (rest === '' ? '' : `\u0000${rest}`),
        interpolation,
      );
  }
  const at = source.locate(['jobs', job], 'key');
  const unread = new Set(
    stringPaths(document.with, ['jobs', job, 'with'])
      .filter(replaced)
      .map((path) => place(source.locate(path))),
  );
  return sourceOf(
    source.file,
    Object.assign(nullMap(), root, {
      jobs: Object.assign(nullMap(), jobs, { [job]: Object.assign(nullMap(), document, { with: given }) }),
    }),
    source.problems.filter((problem) => problem.severity !== 'warning' || !unread.has(place(problem))),
    (path, anchor) => (replaced(path) ? at : source.locate(path, anchor)),
    interpolated,
  );
}

function place({ line, col }: SourceLocation): string {
  return `${line}:${col}`;
}

/** The path of every string below `value`, which is at `path`. */
function stringPaths(value: unknown, path: ValuePath): ValuePath[] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((item, index) => stringPaths(item, [...path, index]));
  if (isMap(value)) return Object.entries(value).flatMap(([key, item]) => stringPaths(item, [...path, key]));
  return [];
}
