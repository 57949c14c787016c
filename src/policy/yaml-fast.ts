import { load } from 'js-yaml';
import { interpolate, type PolicyEnv } from './interpolate.js';
import { isMergeKey, MERGE_KEY, YAML_CORE_SCHEMA } from './js-yaml-schema.js';
import { NodeTracker } from './js-yaml-tracker.js';
import { pathKey } from './paths.js';

/** What the AST walk in `readYaml` would give for a document it has no problems with. */
export interface PlainYaml {
  /** The document as plain data (maps are null-prototype objects), `${VAR}`s replaced. */
  readonly value: unknown;
  /** The text as written of each interpolated string, by `pathKey` of its path. */
  readonly interpolated: Map<string, string>;
}

export interface FastLimits {
  /** The AST walk's limit on alias expansions. */
  readonly maxAliasExpansions: number;
  /** The AST walk's limit on nesting, where following an alias counts as a level. */
  readonly maxDepth: number;
}

/** Keys any object lists first, in ascending order: array indexes. */
function isArrayIndex(key: string): boolean {
  return /^(?:0|[1-9][0-9]*)$/.test(key) && Number(key) < 2 ** 32 - 1;
}

/** Thrown inside the walk to give up: the caller falls back to the AST walk. */
class Declined extends Error {}

/** `yaml` refuses an implicit key whose `:` is more than 1024 characters from its start; js-yaml does not. */
const MAX_LINE = 1024;

/**
 * Reads YAML with js-yaml, about ten times faster than `yaml`'s `parseDocument`, and walks the
 * values into exactly what the AST walk of `readYaml` produces. Returns undefined wherever the two
 * could differ or the AST walk would report a problem: a syntax error or duplicate key (js-yaml
 * throws), an explicit tag or a directive, a key that is not a plain scalar (null, a collection, an
 * alias), a line longer than 1024 characters, a failed `${VAR}`, deep nesting, many alias
 * expansions, and the constructs below (`mayHoldYamlError`, `NodeTracker`) on which the two parsers
 * part. The caller then reads the file the slow way, which finds and places every problem. The
 * tests compare both readers on every example and fixture and on generated documents.
 *
 * Positions are not kept: js-yaml's would come from a second tokenizer, and only a policy with a
 * problem needs them.
 */
export function readYamlFast(text: string, env: PolicyEnv, limits: FastLimits): PlainYaml | undefined {
  if (mayHoldTagOrDirective(text) || mayHoldYamlError(text) || hasLongLine(text) || mayRedefineAnchor(text)) {
    return undefined;
  }
  const nodes = new NodeTracker();
  let loaded: unknown;
  try {
    loaded = load(text, { schema: YAML_CORE_SCHEMA, listener: nodes.listener, onWarning: nodes.onWarning });
  } catch {
    return undefined;
  }
  if (!nodes.accepted()) return undefined;
  try {
    return walk(loaded, env, limits, nodes.aliasesIn);
  } catch (error) {
    if (error instanceof Declined) return undefined;
    throw error;
  }
}

/**
 * A `!` where a tag could start, or a `%` starting a line (a directive: `%YAML 1.1` changes how
 * `yaml` reads scalars). Tags and directives are rare in a policy, and where `yaml` and js-yaml
 * resolve them differently is not worth knowing: such a file takes the slow path. A `!` inside a
 * quoted string may match too; that only costs time.
 */
function mayHoldTagOrDirective(text: string): boolean {
  return (text.includes('!') && /(?:^|[\s[{,:])!/.test(text)) || /(?:^\ufeff?|[\r\n])%/.test(text);
}

/**
 * Where the readers are known to part. `yaml` refuses and js-yaml reads: a comment right after a
 * quoted scalar or a flow indicator (`"x"#c`, `[#c`); an anchor or alias name ending in `:`; an anchor
 * run into the collection it names (`&a[1]`); an anchor followed, on a later line, by the `,` that
 * ends its empty entry or by a second anchor. They read differently: `---` or `...` followed by text on a line (`---a` is a plain
 * scalar to `yaml`, a document marker to js-yaml); a backslash ending a line (an escaped line break
 * in a double-quoted string: they fold what follows differently); a carriage return alone (a line
 * break to js-yaml only); a tab anywhere (in indentation and around block scalars); a block scalar
 * with an explicit indentation (`|2`: they differ on its blank lines with extra spaces). And a
 * list entry left empty (`-` ending a line): js-yaml then takes a `- ` on a later, less indented
 * line for an entry of the same list.
 */
function mayHoldYamlError(text: string): boolean {
  return (
    /["'[\]{},]#|[&*][^\s,[\]{}]*:(?:[\s,[\]{}]|$)|\\\r?\n|\r(?!\n)/.test(text) ||
    /(?:^|[\r\n])(?:---|\.\.\.)[^\s]/.test(text) ||
    /^ *(?:- +)*- *(?:#.*)?\r?$|[|>](?:[1-9][+-]?|[+-][1-9]) *(?:#.*)?\r?$/m.test(text) ||
    text.includes('\t') ||
    (text.includes('&') && /&[^\s,[\]{}]*[[{]|&[^\s,[\]{}]+ *(?:#.*)?(?:\r?\n *(?:#.*)?)+[,&]/.test(text))
  );
}

/**
 * An anchor name given twice. An alias then means the latest definition before it in `yaml`, but in
 * js-yaml an anchor on a collection is set again when the collection ends, after any anchor inside.
 */
function mayRedefineAnchor(text: string): boolean {
  if (!text.includes('&')) return false;
  const names = new Set<string>();
  for (const match of text.matchAll(/(?:^|[\s[{,])&([^\s,[\]{}]+)/g)) {
    const name = match[1] ?? '';
    if (names.has(name)) return true;
    names.add(name);
  }
  return false;
}

function hasLongLine(text: string): boolean {
  if (text.length <= MAX_LINE) return false;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end - start > MAX_LINE) return true;
    start = end + 1;
  }
  return false;
}

function isPlainMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && value !== MERGE_KEY;
}

/**
 * The AST walk over js-yaml's values. js-yaml shares one value among an anchor and its aliases;
 * the walk copies each time, as the AST walk does, and counts the alias entries it passes the way
 * the AST walk counts alias expansions (or more, never fewer).
 */
function walk(
  root: unknown,
  env: PolicyEnv,
  limits: FastLimits,
  aliasesIn: ReadonlyMap<object, number>,
): PlainYaml {
  const interpolated = new Map<string, string>();
  const path: (string | number)[] = [];
  // Each level the AST walk descends may be an alias plus its target, two levels of its count.
  const maxDepth = Math.floor(limits.maxDepth / 2);
  let aliasExpansions = 0;

  const toValue = (node: unknown, depth: number): unknown => {
    if (depth > maxDepth) throw new Declined();
    if (typeof node === 'string') {
      if (!node.includes('${')) return node;
      const result = interpolate(node, env);
      if (!result.ok) throw new Declined();
      if (result.interpolated) interpolated.set(pathKey(path), node);
      return result.value;
    }
    if (node === null || typeof node !== 'object') return node;
    // A plain `<<` as a value is the string "<<" to the AST walk, but an alias to an anchored `<<`
    // key is a symbol there: js-yaml's value cannot tell them apart.
    if (node === MERGE_KEY) throw new Declined();
    aliasExpansions += aliasesIn.get(node) ?? 0;
    if (aliasExpansions > limits.maxAliasExpansions) throw new Declined();
    if (Array.isArray(node)) {
      const list: unknown[] = new Array(node.length);
      for (let index = 0; index < node.length; index += 1) {
        path.push(index);
        list[index] = toValue(node[index], depth + 1);
        path.pop();
      }
      return list;
    }
    return mapToValue(node as Record<string, unknown>, depth);
  };

  const mapToValue = (node: Record<string, unknown>, depth: number): Record<string, unknown> => {
    const object: Record<string, unknown> = Object.create(null);
    const recordsBefore = interpolated.size;
    const merges: unknown[] = [];
    for (const key of Object.keys(node)) {
      if (isMergeKey(key)) {
        merges.push(node[key]);
        continue;
      }
      // A null key (`~:`, `? `) reads as "null"; the AST walk refuses it.
      if (key === 'null') throw new Declined();
      path.push(key);
      object[key] = toValue(node[key], depth + 1);
      path.pop();
    }
    // As in the AST walk: own keys win wherever `<<` stands, earlier merges win over later ones,
    // and a merged map's own `<<` entries are not followed.
    for (const merge of merges) {
      const sources = Array.isArray(merge) ? merge : [merge];
      for (const source of sources) {
        if (!isPlainMap(source)) throw new Declined();
        aliasExpansions += aliasesIn.get(source) ?? 0;
        for (const key of Object.keys(source)) {
          if (isMergeKey(key) || key in object) continue;
          if (key === 'null') throw new Declined();
          path.push(key);
          object[key] = toValue(source[key], depth + 1);
          path.pop();
        }
      }
    }
    // Keys like "2" come first in any object, so js-yaml's maps lose the file's order of them, and
    // `${VAR}` records below would be made in another order than the AST walk makes them.
    if (interpolated.size > recordsBefore) {
      const keys = Object.keys(object);
      if (keys.length > 1 && isArrayIndex(keys[0] ?? '')) throw new Declined();
    }
    return object;
  };

  // js-yaml gives undefined for a stream without a document (an empty file); `yaml` gives null.
  const value = root === undefined ? null : toValue(root, 0);
  return { value, interpolated };
}
