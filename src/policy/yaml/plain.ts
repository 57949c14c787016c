import { interpolate, type PolicyEnv } from '../interpolate.js';
import { pathKey } from '../paths.js';
import { yaml } from './package.js';
import type { Interpolation } from './source.js';
import { MAX_DEPTH, nullMap } from './walk.js';

/**
 * The values of a policy written in the plain YAML almost every policy is written in, read line by
 * line without the `yaml` package's syntax tree: block maps and lists, one-line flow maps and
 * lists, plain and one-line quoted scalars, comments. A 10,000-job policy reads in a tenth of the
 * time (bench/policy-validate.ts). Positions cost too: the reading keeps those of the keys of the
 * top two levels (a job's name), and `readYaml` reads the text again `placing` every node only
 * when a problem is to be placed.
 *
 * Anything else gives up (returns undefined) and the text is read by the `yaml` package: anchors,
 * aliases and merge keys, tags, block and multi-line scalars, directives and document markers,
 * tabs and carriage returns, explicit keys, a flow collection over several lines, and whatever
 * the `yaml` package would report: a syntax error, a duplicate key, a failed `${VAR}`. Scalars are
 * typed by the `yaml` package's own core schema. test/unit/policy/yaml-plain.test.ts holds both
 * readers to the same values and positions on every policy of the repository and on generated ones.
 */

/** What the walk in walk.ts gives for a text both readers read: values, and each interpolated string. */
export interface PlainYaml {
  readonly value: unknown;
  readonly interpolated: ReadonlyMap<string, Interpolation>;
  /**
   * Where the keys of the top two levels are (`version`, `jobs`, `jobs.<name>`), by `pathKey`:
   * what a loaded policy places its jobs and windows with, so a valid one needs no other reading.
   */
  readonly keys: ReadonlyMap<string, Place>;
  /**
   * With `placing`, where each node is (its key, for a map entry, and its value), by `pathKey`,
   * and where the document starts: what the `yaml` package would place it at.
   */
  readonly places: ReadonlyMap<string, { readonly key: Place; readonly value: Place }>;
  readonly root: Place;
}

/** A line and column, 1-based. */
export interface Place {
  readonly line: number;
  readonly col: number;
}

/** Thrown inside the reader to give up; never seen outside it. */
const DECLINED = Symbol('declined');

function decline(): never {
  throw DECLINED;
}

/** The core schema's scalar tags, in the order the `yaml` package tries them on a plain scalar. */
interface ScalarTag {
  readonly test?: RegExp;
  readonly default?: boolean | string;
  resolve(value: string, onError: (message: string) => void, options: object): unknown;
}
const SCALAR_TAGS = (new yaml.Document().schema as unknown as { tags: ScalarTag[] }).tags.filter(
  (tag) => tag.default === true && tag.test !== undefined,
);
/** A plain scalar that could be anything but a string starts with one of these (or is empty). */
const MAYBE_TYPED = /^[-+.0-9~nNtTfF]/;
const NO_OPTIONS = {};
const ignore = () => undefined;

/** A plain scalar's value, typed as the `yaml` package types it. */
function typed(text: string): unknown {
  if (text !== '' && !MAYBE_TYPED.test(text)) return text;
  for (const tag of SCALAR_TAGS) {
    if (!tag.test?.test(text)) continue;
    // null and booleans come back as a Scalar node, numbers as themselves
    const value = tag.resolve(text, ignore, NO_OPTIONS);
    return yaml.isScalar(value) ? value.value : value;
  }
  return text;
}

/** What a plain scalar may not start with: indicators the `yaml` package reads otherwise. */
const INDICATOR_START = /^(?:[&*!|>%@`'"{}[\],#]|[-?:](?: |$))/;
/** Escapes of double-quoted scalars read here; any other declines. */
const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  '"': '"',
  '/': '/',
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  b: '\b',
  f: '\f',
  ' ': ' ',
};

/** Reads `text` as described above, or undefined when the `yaml` package must read it. */
export function readPlainYaml(
  text: string,
  env: PolicyEnv,
  allowEnv: ReadonlySet<string>,
  { placing = false }: { placing?: boolean } = {},
): PlainYaml | undefined {
  if (text.includes('\t') || text.includes('\r') || text.startsWith('\ufeff')) return undefined;
  try {
    return new PlainReader(text, env, allowEnv, placing).read();
  } catch (error) {
    if (error === DECLINED) return undefined;
    throw error;
  }
}

/**
 * Reads the text one significant line at a time (blank and comment lines skipped), keeping only
 * the current line: a policy's lines are never all held at once.
 */
class PlainReader {
  readonly #text: string;
  readonly #env: PolicyEnv;
  readonly #allowEnv: ReadonlySet<string>;
  /** Where the line after the current one starts. */
  #next = 0;
  #lineNumber = 0;
  /** The current line: whether there is one, its number (1-based), indent and content (trimmed). */
  #has = false;
  #number = 0;
  #indent = 0;
  #content = '';
  /** The content's length before trailing blanks were removed: where an empty value is placed. */
  #rawLength = 0;
  readonly #path: (string | number)[] = [];
  readonly #interpolated = new Map<string, Interpolation>();
  readonly #keys = new Map<string, Place>();
  readonly #placing: boolean;
  readonly #places = new Map<string, { key: Place; value: Place }>();

  constructor(text: string, env: PolicyEnv, allowEnv: ReadonlySet<string>, placing: boolean) {
    this.#text = text;
    this.#env = env;
    this.#allowEnv = allowEnv;
    this.#placing = placing;
  }

  read(): PlainYaml {
    this.#advance();
    if (!this.#has || this.#indent !== 0) decline();
    const root = { line: this.#number, col: 1 };
    const value = this.#block(0, 0);
    if (this.#has) decline();
    return { value, interpolated: this.#interpolated, keys: this.#keys, places: this.#places, root };
  }

  /** Records where the node at the current path is, its key's and its value's line and column, when placing. */
  #place(line: number, col: number, valueLine = line, valueCol = col): void {
    if (this.#placing)
      this.#places.set(pathKey(this.#path), {
        key: { line, col },
        value: { line: valueLine, col: valueCol },
      });
  }

  /** Moves to the next line that is neither blank nor a comment; declines at a directive or document marker. */
  #advance(): void {
    const text = this.#text;
    while (this.#next < text.length) {
      const start = this.#next;
      const newline = text.indexOf('\n', start);
      const end = newline === -1 ? text.length : newline;
      this.#next = end + 1;
      this.#lineNumber += 1;
      let at = start;
      while (at < end && text.charCodeAt(at) === 0x20) at += 1;
      if (at === end || text[at] === '#') continue;
      const first = text[start];
      if (
        (first === '%' || first === '-' || first === '.') &&
        /^(?:%|---|\.\.\.)/.test(text.slice(start, end))
      )
        decline();
      this.#has = true;
      this.#number = this.#lineNumber;
      this.#indent = at - start;
      this.#rawLength = end - at;
      this.#content = text.slice(at, end).trimEnd();
      return;
    }
    this.#has = false;
  }

  #block(indent: number, depth: number): unknown {
    if (depth > MAX_DEPTH) decline();
    return isItem(this.#content) ? this.#list(indent, depth) : this.#map(indent, depth);
  }

  #map(indent: number, depth: number): Record<string, unknown> {
    const object = nullMap();
    while (this.#has && this.#indent >= indent) {
      if (this.#indent > indent || isItem(this.#content)) decline();
      const entry = splitKey(this.#content);
      if (!entry || entry.key in object) decline();
      const line = this.#number;
      // where the value starts on the key's line: after the ":" and its blanks (a comment, or the line's end)
      const restAt = entry.restAt >= this.#content.length ? this.#rawLength : entry.restAt;
      this.#advance();
      this.#path.push(entry.key);
      if (this.#path.length <= 2) this.#keys.set(pathKey(this.#path), { line, col: indent + 1 });
      object[entry.key] = this.#entryValue(entry.rest, indent, depth, line, indent + 1 + restAt);
      this.#path.pop();
    }
    return object;
  }

  /** A map entry's value: on its line, or the block below it (a list may stand at the key's indent). */
  #entryValue(rest: string, indent: number, depth: number, line: number, restCol: number): unknown {
    if (rest === '') {
      const below =
        this.#has && (this.#indent > indent || (this.#indent === indent && isItem(this.#content)));
      if (!below) {
        this.#place(line, indent + 1, line, restCol);
        return null;
      }
      this.#place(line, indent + 1, this.#number, this.#indent + 1);
      return this.#indent > indent ? this.#block(this.#indent, depth + 1) : this.#list(indent, depth + 1);
    }
    this.#place(line, indent + 1, line, restCol);
    const value = this.#inline(rest, depth + 1, line, restCol);
    // a deeper line after a value would continue it (a multi-line scalar) or be an error
    if (this.#has && this.#indent > indent) decline();
    return value;
  }

  #list(indent: number, depth: number): unknown[] {
    const list: unknown[] = [];
    while (this.#has && this.#indent >= indent) {
      if (this.#indent > indent) decline();
      const content = this.#content;
      if (!isItem(content)) break;
      const offset = content.length - content.slice(1).trimStart().length;
      const rest = content.slice(offset);
      if (rest === '' || isItem(rest)) decline();
      this.#path.push(list.length);
      const line = this.#number;
      this.#place(line, indent + offset + 1);
      if (splitKey(rest)) {
        // a map whose first entry is on the item's line: its entries stand at that column
        this.#indent = indent + offset;
        this.#content = rest;
        this.#rawLength -= offset;
        list.push(this.#map(indent + offset, depth + 1));
      } else {
        this.#advance();
        list.push(this.#inline(rest, depth + 1, line, indent + offset + 1));
        if (this.#has && this.#indent > indent) decline();
      }
      this.#path.pop();
    }
    return list;
  }

  /** A value written on one line: a flow collection, a quoted or a plain scalar, then at most a comment. */
  #inline(text: string, depth: number, line: number, col: number): unknown {
    const first = text[0];
    if (first === '{' || first === '[' || first === '"' || first === "'") {
      const cursor = { text, at: 0 };
      const value = this.#flow(cursor, depth, line, col);
      const tail = text.slice(cursor.at);
      if (tail !== '' && !/^ +#/.test(tail) && tail.trim() !== '') decline();
      return value;
    }
    if (INDICATOR_START.test(text)) decline();
    const comment = text.indexOf(' #');
    const plain = (comment === -1 ? text : text.slice(0, comment)).trimEnd();
    if (plain.includes(': ') || plain.endsWith(':')) decline();
    return this.#scalar(typed(plain));
  }

  /**
   * A string's value with its `${VAR}`s replaced, as walk.ts replaces them; a failure declines.
   * Placing, the text is left as written: positions do not depend on values, and a text kept to
   * be placed later is read without its variables.
   */
  #scalar(value: unknown): unknown {
    if (this.#placing || typeof value !== 'string' || !value.includes('${')) return value;
    const result = interpolate(value, this.#env, this.#allowEnv);
    if (!result.ok) decline();
    if (result.interpolated)
      this.#interpolated.set(pathKey(this.#path), { template: value, reads: result.reads });
    return result.value;
  }

  /** A flow value, in a text that starts at `line`, `col`. */
  #flow(cursor: { text: string; at: number }, depth: number, line: number, col: number): unknown {
    if (depth > MAX_DEPTH) decline();
    skipSpaces(cursor);
    const char = cursor.text[cursor.at];
    if (char === '"' || char === "'") return this.#scalar(quoted(cursor));
    if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']';
      const map = char === '{' ? nullMap() : undefined;
      const list: unknown[] = [];
      cursor.at += 1;
      skipSpaces(cursor);
      while (cursor.text[cursor.at] !== close) {
        if (map) {
          skipSpaces(cursor);
          const keyCol = col + cursor.at;
          const key = flowKey(cursor);
          if (key in map) decline();
          this.#path.push(key);
          this.#place(line, keyCol, line, col + cursor.at);
          map[key] = this.#flow(cursor, depth + 1, line, col);
        } else {
          skipSpaces(cursor);
          this.#path.push(list.length);
          this.#place(line, col + cursor.at);
          list.push(this.#flow(cursor, depth + 1, line, col));
        }
        this.#path.pop();
        skipSpaces(cursor);
        const separator = cursor.text[cursor.at];
        if (separator === ',') {
          cursor.at += 1;
          skipSpaces(cursor);
        } else if (separator !== close) decline();
      }
      cursor.at += 1;
      return map ?? list;
    }
    // a plain scalar in a flow collection ends at a flow indicator; a ":" or "#" in it declines
    const start = cursor.at;
    while (cursor.at < cursor.text.length && !',[]{}'.includes(cursor.text[cursor.at] as string))
      cursor.at += 1;
    const plain = cursor.text.slice(start, cursor.at).trim();
    if (plain === '' || plain.includes(':') || plain.includes('#') || INDICATOR_START.test(plain)) decline();
    return this.#scalar(typed(plain));
  }
}

function isItem(content: string): boolean {
  return content === '-' || content.startsWith('- ');
}

/** `key: rest` (rest without a comment, possibly empty), or undefined when the line is no map entry. */
function splitKey(content: string): { key: string; rest: string; restAt: number } | undefined {
  let key: string;
  let after: number;
  if (content[0] === '"' || content[0] === "'") {
    const cursor = { text: content, at: 0 };
    key = quoted(cursor);
    after = cursor.at;
    if (content[after] !== ':') return undefined;
  } else {
    const colon = content.search(/:(?: |$)/);
    if (colon <= 0) return undefined;
    const text = content.slice(0, colon);
    if (text !== text.trim() || text.includes(' #') || INDICATOR_START.test(text)) return undefined;
    const value = typed(text);
    if (value === null || text === '<<') decline();
    key = String(value);
    after = colon;
  }
  // the `yaml` package refuses an implicit key longer than 1024 characters
  if (after > 1000) decline();
  const rest = content.slice(after + 1).trimStart();
  if (rest !== '' && content[after + 1] !== ' ') return undefined;
  const restAt = content.length - rest.length;
  return { key, rest: rest.startsWith('#') ? '' : rest, restAt };
}

/** A key of a flow map, and its ":": a quoted scalar, or a plain one ended by ": " (or ":" before an indicator). */
function flowKey(cursor: { text: string; at: number }): string {
  skipSpaces(cursor);
  let key: string;
  const char = cursor.text[cursor.at];
  if (char === '"' || char === "'") {
    key = quoted(cursor);
    skipSpaces(cursor);
    if (cursor.text[cursor.at] !== ':') decline();
  } else {
    const rest = cursor.text.slice(cursor.at);
    const colon = rest.search(/:(?=[ ,\]}]|$)/);
    const text = colon === -1 ? '' : rest.slice(0, colon);
    if (text === '' || text !== text.trim() || /[,[\]{}#:]/.test(text) || INDICATOR_START.test(text))
      decline();
    const value = typed(text);
    if (value === null || text === '<<') decline();
    key = String(value);
    cursor.at += colon;
  }
  cursor.at += 1;
  const next = cursor.text[cursor.at];
  // an entry without a value (`{ a: }`) is left to the `yaml` package
  if (next !== ' ' && next !== '"' && next !== "'" && next !== '{' && next !== '[') decline();
  skipSpaces(cursor);
  if (',}'.includes(cursor.text[cursor.at] ?? ',')) decline();
  return key;
}

function skipSpaces(cursor: { text: string; at: number }): void {
  while (cursor.text[cursor.at] === ' ') cursor.at += 1;
}

/** A quoted scalar on one line, the cursor on its opening quote; the cursor ends after its closing one. */
function quoted(cursor: { text: string; at: number }): string {
  const { text } = cursor;
  const quote = text[cursor.at];
  let value = '';
  for (let at = cursor.at + 1; at < text.length; at += 1) {
    const char = text[at] as string;
    if (char === quote) {
      if (quote === "'" && text[at + 1] === "'") {
        value += "'";
        at += 1;
        continue;
      }
      cursor.at = at + 1;
      return value;
    }
    if (char === '\\' && quote === '"') {
      const escaped = text[at + 1] as string;
      const hex = escaped === 'x' ? 2 : escaped === 'u' ? 4 : escaped === 'U' ? 8 : 0;
      if (hex > 0) {
        const digits = text.slice(at + 2, at + 2 + hex);
        const code = Number.parseInt(digits, 16);
        if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== hex || code > 0x10ffff) decline();
        value += String.fromCodePoint(code);
        at += 1 + hex;
        continue;
      }
      const replaced = ESCAPES[escaped];
      if (replaced === undefined) decline();
      value += replaced;
      at += 1;
      continue;
    }
    value += char;
  }
  // not closed on this line: a multi-line scalar, or an error
  return decline();
}
