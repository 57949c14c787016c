import type { Alias, Document, Node, Pair, YAMLMap } from 'yaml';
import type { Severity } from '../errors.js';
import { interpolate, type PolicyEnv } from '../interpolate.js';
import { labelled, pathKey, type ValuePath } from '../paths.js';
import { yaml } from './package.js';
import type { Anchor } from './source.js';

const { isAlias, isMap, isScalar, isSeq } = yaml;

/** Beyond this many alias expansions a file is taken as an alias bomb, not a policy. */
export const MAX_ALIAS_EXPANSIONS = 10_000;
/** Values nested deeper than this are refused; following an alias counts as a level. */
export const MAX_DEPTH = 64;

/** Reports a problem at an offset into the text. */
export type Report = (offset: number, message: string, severity?: Severity) => void;

/** The document as plain values, and where each value was written. */
export interface Walked {
  readonly value: unknown;
  /** The text as written of each interpolated string, by `pathKey` of its path, in document order. */
  readonly interpolated: ReadonlyMap<string, string>;
  /** The offset of the node at `path`, or of its nearest ancestor that exists. */
  offsetOf(path: ValuePath, anchor: Anchor): number;
}

/** Where a map entry was written: its key, and its value (the key's offset when it has none). */
interface Place {
  readonly key: number;
  readonly value: number;
}

/**
 * Walks the `yaml` package's AST into plain values. The walk is ours so that each map and list
 * keeps the offsets of its entries (not the nodes: a policy kept in memory would hold its whole
 * AST), duplicate keys are found in linear time (the parser's own check is quadratic in the size
 * of a map), `${VAR}`s are replaced in place with their origin recorded, and aliases and nesting
 * are bounded.
 */
export function walkDocument(
  doc: Document.Parsed,
  env: PolicyEnv,
  unsetVariables: Severity,
  report: Report,
  lineOf: (offset: number) => number,
): Walked {
  const maps = new WeakMap<object, Map<string, Place>>();
  const lists = new WeakMap<object, (number | undefined)[]>();
  const interpolated = new Map<string, string>();
  const aliasTarget = aliasTargets(doc);
  const expanding = new Set<Node>();
  let aliasExpansions = 0;

  // The path of the node being read: pushed and popped rather than copied, as most nodes need it
  // only if they have a problem.
  const path: (string | number)[] = [];
  const at = (key: string | number, node: Node | null, depth: number): unknown => {
    path.push(key);
    const value = toValue(node, depth);
    path.pop();
    return value;
  };

  const toValue = (node: Node | null | undefined, depth: number): unknown => {
    if (node === null || node === undefined) return null;
    if (depth > MAX_DEPTH) {
      report(start(node), labelled(path, `nesting deeper than ${MAX_DEPTH} levels`));
      return null;
    }
    if (isAlias(node)) return aliasToValue(node, depth);
    if (isScalar(node)) {
      const raw = node.value;
      if (typeof raw !== 'string' || !raw.includes('${')) return raw;
      const result = interpolate(raw, env);
      if (!result.ok) {
        const severity = result.unset === undefined ? 'error' : unsetVariables;
        report(start(node), labelled(path, result.message), severity);
        return raw;
      }
      if (result.interpolated) interpolated.set(pathKey(path), raw);
      return result.value;
    }
    if (isSeq(node)) {
      const items = node.items as (Node | null)[];
      const list = items.map((item, index) => at(index, item, depth + 1));
      lists.set(
        list,
        items.map((item) => (item ? start(item) : undefined)),
      );
      return list;
    }
    if (isMap(node)) return mapToValue(node, depth);
    return null;
  };

  const aliasToValue = (node: Alias, depth: number): unknown => {
    const target = aliasTarget(node);
    if (target === undefined) {
      report(start(node), labelled(path, `unknown anchor "*${node.source}"`));
      return null;
    }
    if (expanding.has(target)) {
      report(start(node), labelled(path, `alias "*${node.source}" refers to a node that contains it`));
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
    const value = toValue(target, depth + 1);
    expanding.delete(target);
    return value;
  };

  const addEntry = (
    object: Record<string, unknown>,
    places: Map<string, Place>,
    key: string,
    pair: Pair,
    depth: number,
  ): void => {
    const keyOffset = start(pair.key as Node);
    places.set(key, { key: keyOffset, value: pair.value ? start(pair.value as Node) : keyOffset });
    object[key] = at(key, pair.value as Node | null, depth + 1);
  };

  const mapToValue = (node: YAMLMap, depth: number): Record<string, unknown> => {
    const object: Record<string, unknown> = Object.create(null);
    const places = new Map<string, Place>();
    const merges: Pair[] = [];
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      if (isScalar(keyNode) && typeof keyNode.value === 'symbol') {
        merges.push(pair);
        continue;
      }
      const key = keyName(keyNode);
      if (key === undefined) {
        report(start(keyNode ?? node), labelled(path, 'a key must be a plain string'));
        continue;
      }
      const first = places.get(key);
      if (first) {
        report(start(keyNode as Node), `duplicate key "${key}" (first defined on line ${lineOf(first.key)})`);
        continue;
      }
      addEntry(object, places, key, pair, depth);
    }
    // Merged keys never override the map's own keys, wherever `<<` stands in it (YAML merge spec).
    for (const merge of merges) {
      for (const source of mergeSources(merge.value as Node | null, aliasTarget)) {
        if (!source) {
          report(
            start((merge.value as Node | null) ?? (merge.key as Node)),
            labelled(path, 'a "<<" merge takes a map or a list of maps'),
          );
          continue;
        }
        for (const pair of source.items) {
          const key = keyName(pair.key as Node | null);
          if (key !== undefined && !places.has(key)) addEntry(object, places, key, pair, depth);
        }
      }
    }
    maps.set(object, places);
    return object;
  };

  const value = toValue(doc.contents as Node | null, 0);
  const root = doc.contents ? start(doc.contents) : 0;

  const offsetOf = (path: ValuePath, anchor: Anchor): number => {
    let current: unknown = value;
    let keyOffset = root;
    let valueOffset = root;
    for (const segment of path) {
      const container = current !== null && typeof current === 'object' ? current : undefined;
      const place = container && maps.get(container)?.get(String(segment));
      const item = container && lists.get(container)?.[Number(segment)];
      if (place) {
        keyOffset = place.key;
        valueOffset = place.value;
        current = (current as Record<string, unknown>)[String(segment)];
      } else if (item !== undefined) {
        keyOffset = item;
        valueOffset = item;
        current = (current as unknown[])[Number(segment)];
      } else {
        // The path goes further than the file: point at the deepest entry that is there.
        return keyOffset;
      }
    }
    return anchor === 'key' ? keyOffset : valueOffset;
  };

  return { value, interpolated, offsetOf };
}

/**
 * Each alias's target (the last node before it with its anchor), found in one walk of the
 * document on the first alias: `Alias.resolve` walks the whole document on every call, so an
 * alias bomb cost MAX_ALIAS_EXPANSIONS walks (half a minute beside a deeply nested value).
 */
function aliasTargets(doc: Document.Parsed): (alias: Alias) => Node | undefined {
  let targets: Map<Alias, Node> | undefined;
  return (alias) => {
    if (!targets) {
      const found = new Map<Alias, Node>();
      const anchors = new Map<string, Node>();
      yaml.visit(doc, {
        Node: (_key, node) => {
          if (isAlias(node)) {
            const target = anchors.get(node.source);
            if (target) found.set(node, target);
          } else if ((isScalar(node) || isMap(node) || isSeq(node)) && node.anchor) {
            anchors.set(node.anchor, node);
          }
        },
      });
      targets = found;
    }
    return targets.get(alias);
  };
}

/** The maps a `<<` merges in; undefined for an entry that is not a map. */
function mergeSources(
  value: Node | null,
  aliasTarget: (alias: Alias) => Node | undefined,
): (YAMLMap | undefined)[] {
  const resolved = isAlias(value) ? (aliasTarget(value) ?? null) : value;
  if (isMap(resolved)) return [resolved];
  if (isSeq(resolved)) {
    return resolved.items.map((item) => {
      const entry = isAlias(item) ? aliasTarget(item) : item;
      return isMap(entry) ? entry : undefined;
    });
  }
  return [undefined];
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
