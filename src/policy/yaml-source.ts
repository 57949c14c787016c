import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type Pair,
  type ParsedNode,
  parseDocument,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import type { PolicyProblem, SourceLocation } from './errors.js';
import { interpolate, type PolicyEnv } from './interpolate.js';
import { labelled, pathKey, type ValuePath } from './paths.js';

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

/** Beyond this many alias expansions a file is taken as an alias bomb, not a policy. */
const MAX_ALIAS_EXPANSIONS = 10_000;
const MAX_DEPTH = 64;

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
 * Reads YAML into plain values. Parsing is the `yaml` package's; the walk from its AST to values is
 * ours, so that each value keeps a link to the node it came from (for `file:line:col`), duplicate
 * keys are found in linear time (the parser's own check is quadratic in the size of a map), and
 * `${VAR}`s are replaced in place with their origin recorded.
 */
export function readYaml(text: string, file: string, env: PolicyEnv): YamlSource {
  const lineCounter = new LineCounter();
  const doc = withEnvSnapshot(() =>
    parseDocument(text, { lineCounter, merge: true, uniqueKeys: false, prettyErrors: false }),
  );
  const at = (offset: number): SourceLocation => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, col };
  };
  const problems: PolicyProblem[] = [];
  const report = (offset: number, message: string) => problems.push({ ...at(offset), message });

  for (const error of [...doc.errors, ...doc.warnings]) {
    report(error.pos[0], `invalid YAML: ${yamlMessage(error.code, error.message, text, error.pos[0])}`);
  }
  if (problems.length > 0) {
    return {
      file,
      value: undefined,
      problems,
      locate: () => at(0),
      isInterpolated: () => false,
      templateOf: () => undefined,
      interpolatedBelow: () => [],
    };
  }

  const maps = new WeakMap<object, Map<string, Pair>>();
  const seqs = new WeakMap<object, YAMLSeq>();
  const interpolated = new Map<string, string>();
  let aliasExpansions = 0;
  const expanding = new Set<Node>();

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
      const target = node.resolve(doc as Document);
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
        report(start(node), labelled(materialize(link), result.message));
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
    const resolved = isAlias(value) ? (value.resolve(doc as Document) ?? null) : value;
    if (isMap(resolved)) return [resolved];
    if (isSeq(resolved)) {
      return resolved.items.map((item) => {
        const entry = isAlias(item) ? item.resolve(doc as Document) : item;
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

/**
 * Runs `parse` with `process.env` swapped for a plain copy. yaml 2.x's parser reads
 * `process.env.LOG_TOKENS` once per token, and each read of Node's real env object is a native
 * lookup: for a 10,000-job policy that was 40% of the parse. Parsing is synchronous, so no other
 * code can observe the swap, and the real object is back before this returns or throws.
 */
function withEnvSnapshot<T>(parse: () => T): T {
  const env = process.env;
  process.env = { ...env };
  try {
    return parse();
  } finally {
    process.env = env;
  }
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
