import type { Alias, Document, Node, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import type { Severity } from '../errors.js';
import { interpolate, type PolicyEnv } from '../interpolate.js';
import { labelled, pathKey, type ValuePath } from '../paths.js';
import { yaml } from './package.js';
import type { Anchor, Interpolation } from './source.js';

const { isAlias, isMap, isScalar, isSeq } = yaml;

/**
 * How many values aliases may add to a document, each alias (and each map a `<<` merges in)
 * weighed by the size of what it copies: a collection counts itself and everything in it, aliases
 * inside it as the values they copy. A merge key of 10 values on each of 10,000 jobs adds
 * 100,000; an alias bomb is refused at the alias that would cross it, before any of it is copied.
 */
export const MAX_ALIAS_VALUES = 500_000;
/** Values nested deeper than this are refused; following an alias counts as a level. */
export const MAX_DEPTH = 64;

/** Reports a problem at an offset into the text. */
export type Report = (offset: number, message: string, severity?: Severity) => void;

/** The document as plain values, and where each value was written. */
export interface Walked {
  readonly value: unknown;
  /** Each interpolated string, by `pathKey` of its path, in document order. */
  readonly interpolated: ReadonlyMap<string, Interpolation>;
  /** The offset of the node at `path`, or of its nearest ancestor that exists. */
  offsetOf(path: ValuePath, anchor: Anchor): number;
}

/** Where a map entry was written: its key, and its value (the key's offset when it has none). */
interface Place {
  readonly key: number;
  readonly value: number;
}

/** What a walk reads `${VAR}`s with. */
interface WalkVariables {
  readonly env: PolicyEnv;
  readonly allowEnv: ReadonlySet<string>;
  /** What an unset variable is, by the path of the string that reads it. */
  readonly unset: (path: ValuePath) => Severity;
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
  variables: WalkVariables,
  report: Report,
  lineOf: (offset: number) => number,
): Walked {
  const walk = new DocumentWalk(doc, variables, report, lineOf);
  const value = walk.toValue(doc.contents as Node | null, 0);
  const root = doc.contents ? start(doc.contents) : 0;

  return {
    value,
    interpolated: walk.interpolated,
    offsetOf: offsetFinder(value, root, walk.maps, walk.lists),
  };
}

/**
 * One walk of one document: the places of what it has read, the aliases it has copied so far, and
 * the path of the node it is reading. Dropped when the walk ends, with the AST it refers to.
 */
class DocumentWalk {
  readonly maps = new WeakMap<object, Map<string, Place>>();
  readonly lists = new WeakMap<object, (number | undefined)[]>();
  readonly interpolated = new Map<string, Interpolation>();
  // Every copy of a node has the places of the node: an alias copies values, not positions. Kept
  // for copies only, so a policy without aliases pays nothing for them.
  readonly #placesOf = new WeakMap<Node, Map<string, Place>>();
  readonly #offsetsOf = new WeakMap<Node, (number | undefined)[]>();
  readonly #aliasTarget: (alias: Alias) => Node | undefined;
  readonly #sizeOf: (node: Node) => number;
  readonly #expanding = new Set<Node>();
  #aliasValues = 0;
  // The path of the node being read: pushed and popped rather than copied, as most nodes need it
  // only if they have a problem.
  readonly #path: (string | number)[] = [];
  readonly #variables: WalkVariables;
  readonly #report: Report;
  readonly #lineOf: (offset: number) => number;

  constructor(
    doc: Document.Parsed,
    variables: WalkVariables,
    report: Report,
    lineOf: (offset: number) => number,
  ) {
    this.#aliasTarget = aliasTargets(doc);
    this.#sizeOf = expandedSizes(this.#aliasTarget);
    this.#variables = variables;
    this.#report = report;
    this.#lineOf = lineOf;
  }

  /**
   * Whether copying `target` here stays within MAX_ALIAS_VALUES. Inside a copy, what is copied
   * again was weighed with the copy. Past the budget, the first alias is reported and none is read.
   */
  #withinBudget(alias: Alias, target: Node): boolean {
    if (this.#expanding.size > 0) return true;
    if (this.#aliasValues > MAX_ALIAS_VALUES) return false;
    const size = this.#sizeOf(target);
    this.#aliasValues += size;
    if (this.#aliasValues <= MAX_ALIAS_VALUES) return true;
    this.#report(
      start(alias),
      labelled(
        this.#path,
        `alias "*${alias.source}" copies ${size} values, past the ${MAX_ALIAS_VALUES} that aliases may add to a policy (an alias bomb?)`,
      ),
    );
    return false;
  }

  #at(key: string | number, node: Node | null, depth: number): unknown {
    this.#path.push(key);
    const value = this.toValue(node, depth);
    this.#path.pop();
    return value;
  }

  toValue(node: Node | null | undefined, depth: number): unknown {
    if (node === null || node === undefined) return null;
    if (depth > MAX_DEPTH) {
      this.#report(start(node), labelled(this.#path, `nesting deeper than ${MAX_DEPTH} levels`));
      return null;
    }
    if (isAlias(node)) return this.#aliasToValue(node, depth);
    if (isScalar(node)) return this.#scalarToValue(node);
    if (isSeq(node)) return this.#listToValue(node, depth);
    if (isMap(node)) return this.#mapToValue(node, depth);
    return null;
  }

  /** A scalar, its `${VAR}`s replaced; one that cannot be is reported and kept as written. */
  #scalarToValue(node: Scalar): unknown {
    const raw = node.value;
    if (typeof raw !== 'string' || !raw.includes('${')) return raw;
    const variables = this.#variables;
    const result = interpolate(raw, variables.env, variables.allowEnv);
    if (!result.ok) {
      const severity = result.unset === undefined ? 'error' : variables.unset(this.#path);
      this.#report(start(node), labelled(this.#path, result.message), severity);
      return raw;
    }
    if (result.interpolated)
      this.interpolated.set(pathKey(this.#path), { template: raw, reads: result.reads });
    return result.value;
  }

  #listToValue(node: YAMLSeq, depth: number): unknown[] {
    const items = node.items as (Node | null)[];
    const list = items.map((item, index) => this.#at(index, item, depth + 1));
    let offsets = this.#expanding.size > 0 ? this.#offsetsOf.get(node) : undefined;
    if (!offsets) {
      offsets = items.map((item) => (item ? start(item) : undefined));
      if (this.#expanding.size > 0) this.#offsetsOf.set(node, offsets);
    }
    this.lists.set(list, offsets);
    return list;
  }

  #aliasToValue(node: Alias, depth: number): unknown {
    const target = this.#aliasTarget(node);
    if (target === undefined) {
      this.#report(start(node), labelled(this.#path, `unknown anchor "*${node.source}"`));
      return null;
    }
    if (this.#expanding.has(target)) {
      this.#report(
        start(node),
        labelled(this.#path, `alias "*${node.source}" refers to a node that contains it`),
      );
      return null;
    }
    if (!this.#withinBudget(node, target)) return null;
    this.#expanding.add(target);
    const value = this.toValue(target, depth + 1);
    this.#expanding.delete(target);
    return value;
  }

  /** Reads an entry into `object`; `places` is undefined when the node's places are known already. */
  #addEntry(
    object: Record<string, unknown>,
    places: Map<string, Place> | undefined,
    key: string,
    pair: Pair,
    depth: number,
  ): void {
    const keyOffset = start(pair.key as Node);
    places?.set(key, { key: keyOffset, value: pair.value ? start(pair.value as Node) : keyOffset });
    object[key] = this.#at(key, pair.value as Node | null, depth + 1);
  }

  #mapToValue(node: YAMLMap, depth: number): Record<string, unknown> {
    const object = nullMap();
    const copying = this.#expanding.size > 0;
    const known = copying ? this.#placesOf.get(node) : undefined;
    const places = known ?? new Map<string, Place>();
    const adding = known ? undefined : places;
    const merges: Pair[] = [];
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      if (isScalar(keyNode) && typeof keyNode.value === 'symbol') {
        merges.push(pair);
        continue;
      }
      const key = keyName(keyNode);
      if (key === undefined) {
        this.#report(start(keyNode ?? node), labelled(this.#path, 'a key must be a plain string'));
        continue;
      }
      if (key in object) {
        // a copy's duplicates were reported with its node
        const first = places.get(key) as Place;
        if (!known)
          this.#report(
            start(keyNode as Node),
            `duplicate key "${key}" (first defined on line ${this.#lineOf(first.key)})`,
          );
        continue;
      }
      this.#addEntry(object, adding, key, pair, depth);
    }
    this.#addMerged(object, adding, merges, depth);
    if (copying) this.#placesOf.set(node, places);
    this.maps.set(object, places);
    return object;
  }

  /** Merged keys never override the map's own keys, wherever `<<` stands in it (YAML merge spec). */
  #addMerged(
    object: Record<string, unknown>,
    places: Map<string, Place> | undefined,
    merges: readonly Pair[],
    depth: number,
  ): void {
    for (const merge of merges) {
      for (const { map, alias } of mergeSources(merge.value as Node | null, this.#aliasTarget)) {
        if (!map) {
          this.#report(
            start((merge.value as Node | null) ?? (merge.key as Node)),
            labelled(this.#path, 'a "<<" merge takes a map or a list of maps'),
          );
          continue;
        }
        if (alias && !this.#withinBudget(alias, map)) continue;
        for (const pair of map.items) {
          const key = keyName(pair.key as Node | null);
          if (key !== undefined && !(key in object)) this.#addEntry(object, places, key, pair, depth);
        }
      }
    }
  }
}

/**
 * `Walked.offsetOf` over the places the walk kept. Made outside `walkDocument`, whose closures
 * share one context with the parser's document: a closure made there would keep the whole AST
 * alive for as long as the policy is kept.
 */
function offsetFinder(
  value: unknown,
  root: number,
  maps: WeakMap<object, ReadonlyMap<string, Place>>,
  lists: WeakMap<object, readonly (number | undefined)[]>,
): Walked['offsetOf'] {
  return (path, anchor) => {
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
}

/**
 * Each alias's target (the last node before it with its anchor), found in one walk of the
 * document on the first alias: `Alias.resolve` walks the whole document on every call, so an
 * alias bomb of 10,000 aliases cost 10,000 walks (half a minute beside a deeply nested value).
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

/** The maps a `<<` merges in, each with the alias it was written as; no map for an entry that is not one. */
function mergeSources(
  value: Node | null,
  aliasTarget: (alias: Alias) => Node | undefined,
): { map: YAMLMap | undefined; alias?: Alias }[] {
  const entry = (node: Node | null) => {
    const resolved = isAlias(node) ? aliasTarget(node) : node;
    return { map: isMap(resolved) ? resolved : undefined, ...(isAlias(node) ? { alias: node } : {}) };
  };
  const resolved = isAlias(value) ? (aliasTarget(value) ?? null) : value;
  if (isSeq(resolved)) return (resolved.items as (Node | null)[]).map(entry);
  return [entry(value)];
}

/**
 * The number of values a node stands for once its aliases are copied: itself, and what is in it,
 * map keys included. Sizes of aliased nodes are kept, so each is weighed once, and the walk is a
 * loop, not a recursion, so no document is too deep to weigh. An alias inside the node it refers
 * to counts one (the walk refuses it).
 */
function expandedSizes(aliasTarget: (alias: Alias) => Node | undefined): (node: Node) => number {
  const sizes = new Map<Node, number>();
  const children = (node: Node): (Node | null)[] => {
    if (isSeq(node)) return node.items as (Node | null)[];
    if (isMap(node))
      return node.items.flatMap((pair) => [pair.key as Node | null, pair.value as Node | null]);
    return [];
  };
  return (root) => {
    const known = sizes.get(root);
    if (known !== undefined) return known;
    interface Frame {
      readonly node: Node;
      readonly items: (Node | null)[];
      next: number;
      total: number;
    }
    const open = new Set<Node>([root]);
    const stack: Frame[] = [{ node: root, items: children(root), next: 0, total: 1 }];
    let size = 0;
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as Frame;
      if (frame.next === frame.items.length) {
        stack.pop();
        open.delete(frame.node);
        if (frame.node === root || frame.node.anchor) sizes.set(frame.node, frame.total);
        const parent = stack[stack.length - 1];
        if (parent) parent.total += frame.total;
        else size = frame.total;
        continue;
      }
      const item = frame.items[frame.next++] ?? null;
      const node = isAlias(item) ? aliasTarget(item) : item;
      if (!node) continue;
      const cached = sizes.get(node);
      if (cached !== undefined) frame.total += cached;
      else if (open.has(node) || !(isSeq(node) || isMap(node))) frame.total += 1;
      else {
        open.add(node);
        stack.push({ node, items: children(node), next: 0, total: 1 });
      }
    }
    return size;
  };
}

/**
 * A map without a prototype, so a `__proto__` key is data. Written as a literal: V8 keeps it a fast
 * object, where `Object.create(null)` starts a dictionary (twice as slow to fill, for 10,000 jobs).
 */
export function nullMap(): Record<string, unknown> {
  return { __proto__: null } as unknown as Record<string, unknown>;
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
