import type { State, YAMLException } from 'js-yaml';

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const COLON = 0x3a;
const STAR = 0x2a;
const AMPERSAND = 0x26;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;

/** The position of the first character at or after `position` that is not white space or in a comment. */
function skipSpace(input: string, position: number): number {
  let at = position;
  while (at < input.length) {
    const ch = input.charCodeAt(at);
    if (ch === SPACE || ch === TAB || ch === LF || ch === CR) {
      at += 1;
    } else if (ch === HASH) {
      while (at < input.length && input.charCodeAt(at) !== LF && input.charCodeAt(at) !== CR) at += 1;
    } else {
      break;
    }
  }
  return at;
}

/** Past an anchor (`&name`) at `position`, if there is one: where the node's content starts. */
function skipAnchor(input: string, position: number): number {
  if (input.charCodeAt(position) !== AMPERSAND) return position;
  let at = position + 1;
  while (at < input.length && !/[\s,[\]{}]/.test(input.charAt(at))) at += 1;
  return skipSpace(input, at);
}

/** A flow collection written over several lines: from its `[` or `{` to just past its end. */
interface FlowSpan {
  readonly from: number;
  readonly to: number;
}

/**
 * Follows js-yaml's node events (its `listener` and `onWarning` options) to learn what its values
 * no longer show, and to find where `yaml` would refuse what js-yaml reads:
 *
 * - which nodes were aliases, to count alias expansions as the AST walk does;
 * - a collection or an alias as a map key (js-yaml turns every key into a string; the AST walk
 *   refuses such keys);
 * - an anchored map starting on its anchor's line (`key: &a name: value`), which `yaml` refuses;
 * - a flow collection over several lines indented less than `yaml` requires: each line more than
 *   the block around it, but a closing `]` or `}` may stand at that block's own indentation.
 *
 * Every node is one `composeNode` call, which fires `open` and `close`; a call may wrap a single
 * inner call for the same node (a block value that turns out not to be a map), so a node without
 * inner calls, without a kind and written with `*` is an alias. Any doubt makes the fast path give
 * up (`declined`), never the other way round.
 */
export class NodeTracker {
  declined = false;
  /** For each collection, how many of its entries (keys and values) were written as aliases. */
  readonly aliasesIn = new Map<object, number>();
  #depth = -1;
  readonly #starts: number[] = [];
  readonly #aliases: number[] = [];
  readonly #inner: number[] = [];
  /** Where the first inner node starts, or -1. */
  readonly #firstInner: number[] = [];
  /** The outermost multi-line flow collections so far, in document order. */
  readonly #flowSpans: FlowSpan[] = [];
  /** Where js-yaml found a closing bracket indented less than its collection. */
  readonly #shallowClosers: number[] = [];
  #input = '';

  readonly listener = (event: 'open' | 'close', state: State): void => {
    if (event === 'open') {
      this.#input = state.input;
      const parent = this.#depth;
      if (parent >= 0 && this.#firstInner[parent] === -1) this.#firstInner[parent] = state.position;
      this.#depth += 1;
      this.#starts[this.#depth] = state.position;
      this.#aliases[this.#depth] = 0;
      this.#inner[this.#depth] = 0;
      this.#firstInner[this.#depth] = -1;
      return;
    }
    const depth = this.#depth;
    const aliases = this.#aliases[depth] ?? 0;
    const inner = this.#inner[depth] ?? 0;
    const firstInner = this.#firstInner[depth] ?? -1;
    const { input, position, result } = state;
    const kind = state.kind as string | null;
    this.#depth -= 1;
    const parent = this.#depth;
    if (parent >= 0) this.#inner[parent] = (this.#inner[parent] ?? 0) + 1;
    if (kind === 'scalar') {
      // Most nodes: only pass on the aliases of a wrapped inner call.
      if (parent >= 0 && aliases > 0) this.#aliases[parent] = (this.#aliases[parent] ?? 0) + aliases;
      return;
    }
    const start = skipSpace(input, this.#starts[depth] ?? 0);
    const usedAsKey = input.charCodeAt(skipSpace(input, position)) === COLON;

    if (kind === 'mapping' || kind === 'sequence') {
      if (aliases > 0) this.aliasesIn.set(result, (this.aliasesIn.get(result) ?? 0) + aliases);
      if (usedAsKey) this.declined = true;
      const content = skipAnchor(input, start);
      const flow = input.charCodeAt(content) === OPEN_BRACKET || input.charCodeAt(content) === OPEN_BRACE;
      if (flow) {
        this.#addFlowSpan(content, position);
      } else if (content !== start && firstInner !== -1 && !/[\r\n]/.test(input.slice(start, firstInner))) {
        // An anchored block map whose first key is on the anchor's line.
        this.declined = true;
      }
      return;
    }
    let counted = aliases;
    if (kind === null && inner === 0 && input.charCodeAt(start) === STAR) {
      counted += 1;
      if (usedAsKey) this.declined = true;
    }
    if (parent >= 0) this.#aliases[parent] = (this.#aliases[parent] ?? 0) + counted;
  };

  readonly onWarning = (warning: YAMLException): void => {
    const at = (warning as YAMLException & { mark?: { position: number } }).mark?.position ?? -1;
    const ch = this.#input.charAt(at);
    if (warning.reason === 'deficient indentation' && (ch === ']' || ch === '}')) {
      this.#shallowClosers.push(at);
    } else {
      this.declined = true;
    }
  };

  /** Whether what was read is free of the problems above; call after js-yaml is done. */
  accepted(): boolean {
    if (this.declined) return false;
    const input = this.#input;
    for (const closer of this.#shallowClosers) {
      if (!this.#flowSpans.some((span) => span.from < closer && closer < span.to)) return false;
    }
    return this.#flowSpans.every((span) => flowIndentationOk(input, span));
  }

  #addFlowSpan(from: number, to: number): void {
    const text = this.#input;
    let multiline = false;
    for (let at = from; at < to; at += 1) {
      const ch = text.charCodeAt(at);
      if (ch === LF || ch === CR) {
        multiline = true;
        break;
      }
    }
    if (!multiline) return;
    // Collections inside this one closed before it: keep only the outermost.
    const spans = this.#flowSpans;
    while (spans.length > 0 && (spans[spans.length - 1]?.from ?? -1) >= from) spans.pop();
    spans.push({ from, to });
  }
}

/**
 * Whether `yaml` accepts the indentation of a flow collection over several lines that stands in
 * block context. `yaml`'s lexer wants each line in it (but comment lines) indented more than the
 * block entry around it, or, for the line that closes the collection, with that `]` or `}` first,
 * as much. The block entry is taken to be the last one (`key:`, `- `, `? `) before the collection
 * on its first line; a collection first on its line counts as its own entry, which asks for more
 * than `yaml` does, as does treating a collection at the top level like one in a block. Lines
 * inside a quoted scalar are held to the same rule, more than `yaml` asks again.
 */
function flowIndentationOk(input: string, span: FlowSpan): boolean {
  const lineStart = input.lastIndexOf('\n', span.from - 1) + 1;
  let at = lineStart;
  while (input.charCodeAt(at) === SPACE) at += 1;
  let blockIndent = at - lineStart;
  while (at < span.from) {
    const ch = input.charAt(at);
    if ((ch === '-' || ch === '?' || ch === ':') && input.charCodeAt(at + 1) === SPACE) {
      at += 1;
      while (input.charCodeAt(at) === SPACE) at += 1;
      if (at < span.from) blockIndent = at - lineStart;
      continue;
    }
    break;
  }
  let newline = input.indexOf('\n', span.from);
  while (newline !== -1 && newline < span.to) {
    let first = newline + 1;
    while (input.charCodeAt(first) === SPACE) first += 1;
    const indent = first - newline - 1;
    const ch = input.charCodeAt(first);
    newline = input.indexOf('\n', newline + 1);
    if (ch === LF || ch === CR || ch === HASH || Number.isNaN(ch)) continue;
    if (indent > blockIndent) continue;
    if (indent === blockIndent && first === span.to - 1) continue;
    return false;
  }
  return true;
}
