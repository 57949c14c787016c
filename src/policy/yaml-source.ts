import {
  type Alias,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Node,
  type Pair,
  type ParsedNode,
  parseDocument,
  visit,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import type { PolicyProblem, Severity, SourceLocation } from './errors.js';
import { interpolate, type PolicyEnv } from './interpolate.js';
import { labelled, pathKey, type ValuePath } from './paths.js';
import { readYamlFast } from './yaml-fast.js';

export type { ValuePath } from './paths.js';

/** Where to point for a path: at the key of a map entry, or at its value. */
export type Anchor = 'key' | 'value';

/** A YAML file read into plain values, with a way back from any value to its line and column. */
export interface YamlSource {
  readonly file: string;
  /** The document as plain data (maps are null-prototype objects), `${VAR}`s replaced. */
  readonly value: unknown;
  /** Syntax errors, duplicate keys, bad aliases and failed interpolations. */
  readonly problems: readonly PolicyProblem[];
  /** The location of the node at `path`, or of its nearest ancestor that exists. */
  locate(path: ValuePath, anchor?: Anchor): SourceLocation;
  /** Whether the string at `path` came (at least partly) from an environment variable. */
  isInterpolated(path: ValuePath): boolean;
  /** The text as written, `${VAR}`s and all, of an interpolated string: safe to show, unlike its value. */
  templateOf(path: ValuePath): string | undefined;
  /** Paths below `prefix` whose strings came from the environment, relative to `prefix`. */
  interpolatedBelow(prefix: ValuePath): string[][];
}

export interface ReadYamlOptions {
  /**
   * What an unset `${VAR}` is: an error (the default), or a warning, for checking a policy where
   * its secrets are not set (CI). Either way the string keeps its text as written.
   */
  readonly unsetVariables?: Severity;
}

/** Beyond this many alias expansions a file is taken as an alias bomb, not a policy. */
export const MAX_ALIAS_EXPANSIONS = 10_000;
/** Values nested deeper than this are refused; following an alias counts as a level. */
export const MAX_DEPTH = 64;

interface PathLink {
  readonly parent: PathLink | undefined;
  readonly key: string | number;
}

function materialize(link: PathLink | undefined): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at = link; at; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * Reads YAML into plain values, `${VAR}`s replaced with their origin recorded.
 *
 * Two readers give the same result. The fast one (`readYamlFast`: js-yaml, then a walk over its
 * values) reads a 10,000-job policy in a tenth of the time, but keeps no positions. The slow one
 * (`readYamlDocument`: the `yaml` package's AST) knows where every node is, and finds and places
 * every problem. A file the fast reader declines (a problem, or anything the two could read
 * differently) is read the slow way; otherwise the slow reader runs on the first `locate`, which
 * for a valid policy is never.
 */
export function readYaml(
  text: string,
  file: string,
  env: PolicyEnv,
  options: ReadYamlOptions = {},
): YamlSource {
  const fast = readYamlFast(text, env, { maxAliasExpansions: MAX_ALIAS_EXPANSIONS, maxDepth: MAX_DEPTH });
  if (!fast) return readYamlDocument(text, file, env, options);
  let document: YamlSource | undefined;
  const locate = (path: ValuePath, anchor?: Anchor): SourceLocation => {
    document ??= readYamlDocument(text, file, env);
    return document.locate(path, anchor);
  };
  return sourceOf(file, fast.value, [], locate, fast.interpolated);
}

/**
 * Reads YAML into plain values with the `yaml` package; the walk from its AST to values is ours,
 * so that each value keeps a link to the node it came from (for `file:line:col`), duplicate keys
 * are found in linear time (the parser's own check is quadratic in the size of a map), and
 * `${VAR}`s are replaced in place with their origin recorded.
 */
export function readYamlDocument(
  text: string,
  file: string,
  env: PolicyEnv,
  options: ReadYamlOptions = {},
): YamlSource {
  const doc = parseDocument(text, { merge: true, uniqueKeys: false, prettyErrors: false });
  // Offsets become lines and columns from the text itself: the parser's LineCounter misses the
  // line breaks inside a scalar it reads while recovering from a syntax error, which put later
  // problems past the end of their line.
  const lineStarts = [0];
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1))
    lineStarts.push(index + 1);
  const at = (offset: number): SourceLocation => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((lineStarts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return { file, line: low + 1, col: offset - (lineStarts[low] as number) + 1 };
  };
  const problems: PolicyProblem[] = [];
  const report = (offset: number, message: string, severity: Severity = 'error') =>
    problems.push(severity === 'warning' ? { ...at(offset), message, severity } : { ...at(offset), message });

  for (const error of [...doc.errors, ...doc.warnings]) {
    report(error.pos[0], `invalid YAML: ${yamlMessage(error.code, error.message, text, error.pos[0])}`);
  }
  if (problems.length > 0) return sourceOf(file, undefined, problems, () => at(0), new Map());

  const maps = new WeakMap<object, Map<string, Pair>>();
  const seqs = new WeakMap<object, YAMLSeq>();
  const interpolated = new Map<string, string>();
  let aliasExpansions = 0;
  const expanding = new Set<Node>();
  // Each alias's target (the last node before it with its anchor), found in one walk of the
  // document: `Alias.resolve` walks the whole document on every call, so an alias bomb cost
  // MAX_ALIAS_EXPANSIONS walks (half a minute beside a deeply nested value).
  let aliasTargets: Map<Alias, Node> | undefined;
  const aliasTarget = (alias: Alias): Node | undefined => {
    if (!aliasTargets) {
      const targets = new Map<Alias, Node>();
      const anchors = new Map<string, Node>();
      visit(doc, {
        Node: (_key, node) => {
          if (isAlias(node)) {
            const target = anchors.get(node.source);
            if (target) targets.set(node, target);
          } else if ((isScalar(node) || isMap(node) || isSeq(node)) && node.anchor) {
            anchors.set(node.anchor, node);
          }
        },
      });
      aliasTargets = targets;
    }
    return aliasTargets.get(alias);
  };

  const toValue = (
    node: ParsedNode | Node | null | undefined,
    link: PathLink | undefined,
    depth: number,
  ): unknown => {
    if (node === null || node === undefined) return null;
    if (depth > MAX_DEPTH) {
      report(start(node), labelled(materialize(link), `nesting deeper than ${MAX_DEPTH} levels`));
      return null;
    }
    if (isAlias(node)) {
      const target = aliasTarget(node);
      if (target === undefined) {
        report(start(node), labelled(materialize(link), `unknown anchor "*${node.source}"`));
        return null;
      }
      if (expanding.has(target)) {
        report(
          start(node),
          labelled(materialize(link), `alias "*${node.source}" refers to a node that contains it`),
        );
        return null;
      }
      aliasExpansions += 1;
      if (aliasExpansions > MAX_ALIAS_EXPANSIONS) {
        if (aliasExpansions === MAX_ALIAS_EXPANSIONS + 1) {
          report(start(node), `more than ${MAX_ALIAS_EXPANSIONS} alias expansions: aliases nested too deep`);
        }
        return null;
      }
      expanding.add(target);
      const value = toValue(target, link, depth + 1);
      expanding.delete(target);
      return value;
    }
    if (isScalar(node)) {
      const raw = node.value;
      if (typeof raw !== 'string') return raw;
      const result = interpolate(raw, env);
      if (!result.ok) {
        const severity = result.unset === undefined ? 'error' : (options.unsetVariables ?? 'error');
        report(start(node), labelled(materialize(link), result.message), severity);
        return raw;
      }
      if (result.interpolated) interpolated.set(pathKey(materialize(link)), raw);
      return result.value;
    }
    if (isSeq(node)) {
      const list = node.items.map((item, index) =>
        toValue(item as ParsedNode, { parent: link, key: index }, depth + 1),
      );
      seqs.set(list, node);
      return list;
    }
    if (isMap(node)) return mapToValue(node, link, depth);
    return null;
  };

  const mapToValue = (node: YAMLMap, link: PathLink | undefined, depth: number): Record<string, unknown> => {
    const object: Record<string, unknown> = Object.create(null);
    const pairs = new Map<string, Pair>();
    const merges: Pair[] = [];
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      if (isScalar(keyNode) && typeof keyNode.value === 'symbol') {
        merges.push(pair);
        continue;
      }
      const key = keyName(keyNode);
      if (key === undefined) {
        report(
          keyNode ? start(keyNode) : start(node),
          labelled(materialize(link), 'a key must be a plain string'),
        );
        continue;
      }
      const first = pairs.get(key);
      if (first) {
        const firstLine = at(start(first.key as Node)).line;
        report(start(keyNode as Node), `duplicate key "${key}" (first defined on line ${firstLine})`);
        continue;
      }
      pairs.set(key, pair);
      object[key] = toValue(pair.value as ParsedNode | null, { parent: link, key }, depth + 1);
    }
    // Merged keys never override the map's own keys, wherever `<<` stands in it (YAML merge spec).
    for (const merge of merges) {
      for (const source of mergeSources(merge.value as Node | null)) {
        if (!source) {
          report(
            start((merge.value as Node | null) ?? (merge.key as Node)),
            labelled(materialize(link), 'a "<<" merge takes a map or a list of maps'),
          );
          continue;
        }
        for (const pair of source.items) {
          const key = keyName(pair.key as Node | null);
          if (key === undefined || pairs.has(key)) continue;
          pairs.set(key, pair);
          object[key] = toValue(pair.value as ParsedNode | null, { parent: link, key }, depth + 1);
        }
      }
    }
    maps.set(object, pairs);
    return object;
  };

  const mergeSources = (value: Node | null): (YAMLMap | undefined)[] => {
    const resolved = isAlias(value) ? (aliasTarget(value) ?? null) : value;
    if (isMap(resolved)) return [resolved];
    if (isSeq(resolved)) {
      return resolved.items.map((item) => {
        const entry = isAlias(item) ? aliasTarget(item) : item;
        return isMap(entry) ? entry : undefined;
      });
    }
    return [undefined];
  };

  const value = toValue(doc.contents as ParsedNode | null, undefined, 0);

  const locate = (path: ValuePath, anchor: Anchor = 'value'): SourceLocation => {
    let current: unknown = value;
    let keyOffset = doc.contents ? start(doc.contents) : 0;
    let valueOffset = keyOffset;
    for (const segment of path) {
      const pairs = current !== null && typeof current === 'object' ? maps.get(current) : undefined;
      const seq = current !== null && typeof current === 'object' ? seqs.get(current) : undefined;
      const pair = pairs?.get(String(segment));
      const item = seq?.items[Number(segment)] as Node | undefined;
      if (pair) {
        keyOffset = start(pair.key as Node);
        valueOffset = pair.value ? start(pair.value as Node) : keyOffset;
        current = (current as Record<string, unknown>)[String(segment)];
      } else if (item) {
        keyOffset = start(item);
        valueOffset = keyOffset;
        current = (current as unknown[])[Number(segment)];
      } else {
        // The path goes further than the file: point at the deepest entry that is there.
        return at(keyOffset);
      }
    }
    return at(anchor === 'key' ? keyOffset : valueOffset);
  };

  return sourceOf(file, value, problems, locate, interpolated);
}

/** A YamlSource over read values; `interpolated` holds the text as written, by `pathKey`. */
function sourceOf(
  file: string,
  value: unknown,
  problems: readonly PolicyProblem[],
  locate: YamlSource['locate'],
  interpolated: ReadonlyMap<string, string>,
): YamlSource {
  return {
    file,
    value,
    problems,
    locate,
    isInterpolated: (path) => interpolated.has(pathKey(path)),
    templateOf: (path) => interpolated.get(pathKey(path)),
    interpolatedBelow: (prefix) => {
      const head = prefix.length === 0 ? '' : `${pathKey(prefix)}\u0000`;
      const found: string[][] = [];
      for (const key of interpolated.keys()) {
        if (key.startsWith(head)) found.push(key.slice(head.length).split('\u0000'));
      }
      return found;
    },
  };
}

function start(node: Node): number {
  return node.range?.[0] ?? 0;
}

function keyName(node: Node | null): string | undefined {
  if (!isScalar(node)) return undefined;
  const raw = node.value;
  return typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean'
    ? String(raw)
    : undefined;
}

/** The parser's message, with a hint where its wording leaves the cause unclear. */
function yamlMessage(code: string, message: string, text: string, offset: number): string {
  if (code === 'BAD_ALIAS' && text[offset] === '*') {
    return `${message}: a bare "*" starts a YAML alias; quote the glob, e.g. "*"`;
  }
  if (code === 'MULTIPLE_DOCS') return 'a policy file holds one YAML document, but a second one starts here';
  return message;
}
