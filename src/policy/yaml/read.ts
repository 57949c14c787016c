import type { PolicyProblem, Severity } from '../errors.js';
import type { PolicyEnv } from '../interpolate.js';
import { pathKey, type ValuePath } from '../paths.js';
import { aliasPastLimit, MAX_ALIASES } from './alias-limit.js';
import { lineLocator } from './lines.js';
import { yaml } from './package.js';
import { type Place, type PlainYaml, readPlainYaml } from './plain.js';
import { type Anchor, sourceOf, type YamlSource } from './source.js';
import { walkDocument } from './walk.js';

export interface ReadYamlOptions {
  /**
   * What an unset `${VAR}` is: an error (the default), or a warning, for checking a policy where
   * its secrets are not set (CI); or, by the path of the string holding it, either. Either way the
   * string keeps its text as written.
   */
  readonly unsetVariables?: Severity | ((path: ValuePath) => Severity);
  /** nightshift's own variables the text may read after all (NIGHTSHIFT_POLICY_ENV_ALLOW). Default: none. */
  readonly allowEnv?: readonly string[];
}

/**
 * Reads YAML into plain values, `${VAR}`s replaced with their origin recorded. Every problem (a
 * syntax error, a duplicate key, a bad alias, a failed `${VAR}`) is placed at its line and column;
 * a syntax error gives no value, since the tree behind it is not reliable, and neither does a text
 * of more than MAX_ALIASES aliases, which is not parsed. A text in plain YAML is read line by line
 * (plain.ts), and read again to place a node only when a position is asked for; any other is read
 * by the `yaml` package (`parseYaml`).
 */
export function readYaml(
  text: string,
  file: string,
  env: PolicyEnv,
  options: ReadYamlOptions = {},
): YamlSource {
  const tooMany = aliasPastLimit(text);
  if (tooMany !== undefined) {
    const at = lineLocator(text, file);
    const problem = {
      ...at(tooMany),
      message: `more than ${MAX_ALIASES} aliases: refused unread, as an alias bomb`,
    };
    return sourceOf(file, undefined, [problem], () => at(0), new Map());
  }
  const allowEnv = new Set(options.allowEnv);
  const plain = readPlainYaml(text, env, allowEnv);
  if (plain) {
    // A key of the top two levels (a job's name) is placed from the first reading; anything else
    // from a second one that places every node, read on the first question of such a position.
    let placed: PlainYaml | undefined;
    const locate: YamlSource['locate'] = (path, anchor = 'value') => {
      const key = anchor === 'key' && path.length <= 2 ? plain.keys.get(pathKey(path)) : undefined;
      if (key) return { file, ...key };
      placed ??= readPlainYaml(text, env, allowEnv, { placing: true }) as PlainYaml;
      return { file, ...placeOf(placed, path, anchor) };
    };
    return sourceOf(file, plain.value, [], locate, plain.interpolated);
  }
  return parseYaml(text, file, env, options);
}

/** Reads YAML with the `yaml` package: values, every problem, and positions. */
export function parseYaml(
  text: string,
  file: string,
  env: PolicyEnv,
  options: ReadYamlOptions = {},
): YamlSource {
  const at = lineLocator(text, file);
  const problems: PolicyProblem[] = [];
  const report = (offset: number, message: string, severity: Severity = 'error') =>
    problems.push(severity === 'warning' ? { ...at(offset), message, severity } : { ...at(offset), message });
  const doc = yaml.parseDocument(text, { merge: true, uniqueKeys: false, prettyErrors: false });

  for (const error of [...doc.errors, ...doc.warnings]) {
    report(error.pos[0], `invalid YAML: ${yamlMessage(error.code, error.message, text, error.pos[0])}`);
  }
  if (problems.length > 0) return sourceOf(file, undefined, problems, () => at(0), new Map());

  const lineOf = (offset: number) => at(offset).line;
  const variables = {
    env,
    allowEnv: new Set(options.allowEnv),
    unset: unsetSeverity(options.unsetVariables),
  } as const;
  const walked = walkDocument(doc, variables, report, lineOf);
  const locate: YamlSource['locate'] = (path, anchor = 'value') => at(walked.offsetOf(path, anchor));
  return sourceOf(file, walked.value, problems, locate, walked.interpolated);
}

/**
 * `YamlSource.locate` for a text already read, reading it again on its first call. The positions
 * of a read weigh more than the values (1.4 kB a job of a policy, more than the job itself), so a
 * policy kept to be run keeps its text instead, and only a check that finds a problem in it asks
 * where. Offsets do not depend on `${VAR}` values: the text is read without any.
 */
export function locatorOf(text: string, file: string): YamlSource['locate'] {
  let locate: YamlSource['locate'] | undefined;
  return (path, anchor = 'value') => {
    locate ??= placesOf(text, file);
    return locate(path, anchor);
  };
}

function placesOf(text: string, file: string): YamlSource['locate'] {
  const placed = readPlainYaml(text, {}, new Set(), { placing: true });
  if (placed) return (path, anchor = 'value') => ({ file, ...placeOf(placed, path, anchor) });
  return readYaml(text, file, {}, { unsetVariables: 'warning' }).locate;
}

/**
 * Where the node at `path` is, or its nearest ancestor that exists (its key then), as walk.ts's
 * `offsetOf` answers for the `yaml` package's reading.
 */
function placeOf(plain: PlainYaml, path: ValuePath, anchor: Anchor): Place {
  let key = plain.root;
  let value = plain.root;
  for (let depth = 1; depth <= path.length; depth += 1) {
    const place = plain.places.get(pathKey(path.slice(0, depth)));
    if (!place) return key;
    key = place.key;
    value = place.value;
  }
  return anchor === 'key' ? key : value;
}

/** The parser's message, with a hint where its wording leaves the cause unclear. */
function yamlMessage(code: string, message: string, text: string, offset: number): string {
  if (code === 'BAD_ALIAS' && text[offset] === '*') {
    return `${message}: a bare "*" starts a YAML alias; quote the glob, e.g. "*"`;
  }
  if (code === 'MULTIPLE_DOCS') return 'a policy file holds one YAML document, but a second one starts here';
  return message;
}

function unsetSeverity(option: ReadYamlOptions['unsetVariables']): (path: ValuePath) => Severity {
  if (typeof option === 'function') return option;
  const severity = option ?? 'error';
  return () => severity;
}
