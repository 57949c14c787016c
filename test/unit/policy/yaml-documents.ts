// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these documents hold the policy's own ${VAR} syntax
import fc from 'fast-check';

/**
 * Generated YAML documents for comparing the two readers: block and flow maps and lists, plain,
 * quoted and block scalars (numeric edge forms, `${VAR}`s, awkward characters, line breaks),
 * anchors, aliases and merge keys, explicit keys, comments, and the odd malformed bit. A document
 * is a tree rendered to text; the tree is only a means to get varied text, the readers see text.
 */

type Scalar = {
  readonly kind: 'scalar';
  readonly text: string;
  readonly style: 'plain' | 'single' | 'double' | 'literal' | 'folded';
  /** Write the spaces of a plain or quoted scalar as line breaks, folded. */
  readonly folded: boolean;
  /** Block scalar header: chomping and an explicit indentation. */
  readonly chomp: '' | '-' | '+';
  readonly indentation: boolean;
  readonly anchor: number | undefined;
};
type Alias = { readonly kind: 'alias'; readonly index: number };
type Entry = { readonly key: Key; readonly value: Node; readonly explicit: boolean };
type MapNode = {
  readonly kind: 'map';
  readonly flow: boolean;
  readonly entries: readonly Entry[];
  readonly anchor: number | undefined;
};
type SeqNode = {
  readonly kind: 'seq';
  readonly flow: boolean;
  readonly items: readonly Node[];
  readonly anchor: number | undefined;
};
type Node = Scalar | Alias | MapNode | SeqNode;
type Key =
  | { readonly text: string; readonly quoted: boolean; readonly anchor?: number | undefined }
  | { readonly merge: Node }
  | { readonly alias: number };

/** Plain scalars that `yaml` and js-yaml's CORE_SCHEMA resolve differently, and their neighbours. */
// biome-ignore format: a table
export const NUMERIC_EDGES = [
  '0b101', '+0x10', '-0o7', '+.5', '-.5', '0x1F', '0X1F', '0o17', '0O17', '012', '09', '+12', '-0', '+0', '00',
  '1_000', '1e3', '1E3', '.5E-2', '1.', '-1.', '1.2.3', '.inf', '-.Inf', '+.INF', '.NaN', '.nan', '-.nan',
  '0x', '0o', '1e', 'e1', '.', '-', '+', '0.10', '12345678901234567890', '0xFFFFFFFFFFFFFFFFFF', '1:30',
  '2026-12-24', 'true', 'True', 'TRUE', 'tRue', 'yes', 'No', 'on', 'null', 'Null', 'NULL', 'nUll', '~', '<<',
];
// biome-ignore format: a table
const WORDS = [
  'pause', 'resume', 'dev-*', 'team-1', 'a b', 'x.y', 'Europe/Berlin', '0 20 * * 1-5', '15m', '60%',
  'http://h:8/p?q=1', 'a:b', 'a#b', 'é', '日本', 'a - b', '__proto__', 'constructor', 'one two three four',
];
// biome-ignore format: a table
const TEMPLATES = [
  '${A}', 'x-${A}-y', '${B:-d}', '${B}', '$${A}', '${MISSING}', '${MISSING:-m}', '${', '${1X}', '$A', 'a ${A} b',
];
// biome-ignore format: a table
const AWKWARD = [
  '', ' ', 'a #b', 'a: b', "it's", 'say "hi"', 'back\\slash', 'end\\', 'tab\tin', 'two\nlines', 'three\n\nlines',
  ' lead', 'trail ', 'trail\n', '\n', '-x', '[x]', '{x}', '*x', '&x', '!x', '%x', '@x', '`x', '|x', '>x', '?', '? x',
  ',x', '#x', '---', '...', '--- x', 'x\u2028y', 'x\u0085y', '\u00a0', 'x\ufeffy', '\u0001', '\u007f', '\ud83d\ude00',
  '\ud800', 'x\r\ny', 'x\ry',
];
// biome-ignore format: a table
const KEYS = [
  'a', 'b', 'name', 'with', 'jobs', 'x y', '1', '0x10', '1.0', 'true', '~', 'null', '-0', '__proto__',
  'constructor', 'a:b', 'k.1', '日本', '<<x', 'trail ', '',
];

const scalarText = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NUMERIC_EDGES) },
  { weight: 3, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 2, arbitrary: fc.constantFrom(...TEMPLATES) },
  { weight: 2, arbitrary: fc.constantFrom(...AWKWARD) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6, unit: 'grapheme' }) },
);

const anchor = fc.option(fc.nat({ max: 5 }), { freq: 3, nil: undefined });

const scalar: fc.Arbitrary<Scalar> = fc.record({
  kind: fc.constant('scalar' as const),
  text: scalarText,
  style: fc.constantFrom('plain', 'plain', 'plain', 'single', 'double', 'literal', 'folded'),
  folded: fc.boolean(),
  chomp: fc.constantFrom('', '-', '+'),
  indentation: fc.nat({ max: 4 }).map((roll) => roll === 0),
  anchor: fc.option(fc.nat({ max: 5 }), { freq: 6, nil: undefined }),
});

const { node } = fc.letrec<{ node: Node; map: MapNode; seq: SeqNode; key: Key }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 4, depthIdentifier: 'node' },
    { weight: 5, arbitrary: scalar },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('alias' as const), index: fc.nat({ max: 5 }) }) },
    { weight: 2, arbitrary: tie('map') },
    { weight: 2, arbitrary: tie('seq') },
  ),
  map: fc.record({
    kind: fc.constant('map' as const),
    flow: fc.boolean(),
    entries: fc.array(
      fc.record({
        key: tie('key'),
        value: tie('node'),
        explicit: fc.nat({ max: 9 }).map((roll) => roll < 2),
      }),
      { maxLength: 4 },
    ),
    anchor,
  }),
  seq: fc.record({
    kind: fc.constant('seq' as const),
    flow: fc.boolean(),
    items: fc.array(tie('node'), { maxLength: 4 }),
    anchor,
  }),
  key: fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({
        text: fc.constantFrom(...KEYS, ...NUMERIC_EDGES),
        quoted: fc.boolean(),
        anchor: fc.option(fc.nat({ max: 5 }), { freq: 8, nil: undefined }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ merge: tie('node') }) },
    { weight: 1, arbitrary: fc.record({ alias: fc.nat({ max: 5 }) }) },
  ),
}));

export interface Layout {
  /** Spaces per level of block indentation, by depth (the last one for deeper levels). */
  readonly indents: readonly number[];
  /** A map in a list starts on the `- ` line (`- a: 1`). */
  readonly compactMap: boolean;
  /** Lists under a key at the key's own indentation (`a:\n- x`). */
  readonly compactSeq: boolean;
  /** Spread flow collections over several lines. */
  readonly multilineFlow: boolean;
  /** Comments after values, and comment and blank lines between entries. */
  readonly comments: boolean;
  readonly blankLines: boolean;
  readonly spaceBeforeColon: boolean;
  readonly crlf: boolean;
  readonly marker: 'none' | 'start' | 'both';
  /** What comes first: a byte order mark, a `%YAML` directive. */
  readonly preamble: '' | '\ufeff' | '%YAML 1.1\n---\n' | '\ufeff%YAML 1.2\n---\n';
}

const layout: fc.Arbitrary<Layout> = fc.record({
  indents: fc.array(fc.constantFrom(1, 2, 2, 3, 4), { minLength: 1, maxLength: 4 }),
  compactMap: fc.boolean(),
  compactSeq: fc.boolean(),
  multilineFlow: fc.boolean(),
  comments: fc.boolean(),
  blankLines: fc.boolean(),
  spaceBeforeColon: fc.nat({ max: 9 }).map((roll) => roll < 2),
  crlf: fc.boolean(),
  marker: fc.constantFrom('none', 'none', 'start', 'both'),
  preamble: fc.constantFrom('', '', '', '', '', '', '\ufeff', '%YAML 1.1\n---\n', '\ufeff%YAML 1.2\n---\n'),
});

class Renderer {
  readonly #layout: Layout;
  /** The name each anchor index had last; every anchor gets a name of its own. */
  readonly #names = new Map<number, string>();
  #anchors = 0;

  constructor(layout: Layout) {
    this.#layout = layout;
  }

  #anchor(index: number | undefined): string {
    if (index === undefined) return '';
    this.#anchors += 1;
    const name = this.#names.has(index) ? `a${index}x${this.#anchors}` : `a${index}`;
    this.#names.set(index, name);
    return `&${name} `;
  }

  #alias(index: number): string {
    // Mostly aliases to anchors defined above; sometimes an unknown one, which both readers refuse.
    const known = [...this.#names.values()];
    if (index === 5 || known.length === 0) return `*a${index}`;
    return `*${known[index % known.length]}`;
  }

  #comment(): string {
    return this.#layout.comments ? ' # note' : '';
  }

  /** Columns at each depth: the sum of the indentation steps above it. */
  #column(depth: number): number {
    const { indents } = this.#layout;
    let column = 0;
    for (let level = 0; level < depth; level += 1)
      column += indents[Math.min(level, indents.length - 1)] ?? 2;
    return column;
  }

  #pad(depth: number): string {
    return ' '.repeat(this.#column(depth));
  }

  /** A node written inside a flow collection, or after `key: ` when it fits on the line. */
  flow(node: Node, depth: number, inFlow = true): string {
    switch (node.kind) {
      case 'alias':
        return this.#alias(node.index);
      case 'scalar':
        return this.#inlineScalar(node, depth, inFlow);
      case 'map': {
        const anchor = this.#anchor(node.anchor);
        const entries = node.entries.map((entry) => {
          const key = this.#key(entry.key);
          const pair = `${key}: ${this.flow(this.#value(entry), depth + 1)}`;
          return entry.explicit ? `? ${pair}` : pair;
        });
        return `${anchor}{${this.#joinFlow(entries, depth)}}`;
      }
      case 'seq': {
        const anchor = this.#anchor(node.anchor);
        return `${anchor}[${this.#joinFlow(
          node.items.map((item) => this.flow(item, depth + 1)),
          depth,
        )}]`;
      }
    }
  }

  #joinFlow(parts: string[], depth: number): string {
    if (!this.#layout.multilineFlow || parts.length === 0) return parts.join(', ');
    const pad = `${this.#pad(depth + 1)} `;
    return `\n${pad}${parts.join(`,${this.#comment()}\n${pad}`)}\n${pad}`;
  }

  #value(entry: Entry): Node {
    return 'merge' in entry.key ? entry.key.merge : entry.value;
  }

  #key(key: Key): string {
    if ('merge' in key) return '<<';
    // An alias as a key: both readers need a space before the `:`.
    if ('alias' in key) return `${this.#alias(key.alias)} `;
    return `${this.#anchor(key.anchor)}${key.quoted ? JSON.stringify(key.text) : key.text}`;
  }

  #inlineScalar(node: Scalar, depth: number, inFlow: boolean): string {
    const anchor = this.#anchor(node.anchor);
    // Flow indicators in a plain scalar inside a flow collection are a syntax error in both
    // readers: quote them there, mostly, to keep most documents valid.
    const style =
      node.style === 'plain' && inFlow && /[,[\]{}]/.test(node.text) && node.text.length % 4 !== 0
        ? 'double'
        : node.style;
    let text: string;
    if (style === 'plain') text = node.text;
    else if (style === 'single') text = `'${node.text.replaceAll("'", "''")}'`;
    else text = JSON.stringify(node.text);
    if (node.folded && text.includes(' ')) {
      text = text.replaceAll(' ', `\n${this.#pad(depth + 1)} `);
    }
    return `${anchor}${text}`;
  }

  /** Lines of a node in block context at `depth`, for a value that starts on its own line. */
  block(node: Node, depth: number): string[] {
    const pad = this.#pad(depth);
    if (node.kind === 'map' && !node.flow && node.entries.length > 0) {
      const lines: string[] = [];
      const colon = this.#layout.spaceBeforeColon ? ' :' : ':';
      for (const [index, entry] of node.entries.entries()) {
        if (index > 0 && this.#layout.blankLines) lines.push('');
        if (index > 0 && this.#layout.comments) lines.push(`${pad}# between`);
        const key = this.#key(entry.key);
        if (entry.explicit) {
          lines.push(`${pad}? ${key}`, ...this.#afterKey(`${pad}:`, this.#value(entry), depth));
        } else {
          lines.push(...this.#afterKey(`${pad}${key}${colon}`, this.#value(entry), depth));
        }
      }
      return lines;
    }
    if (node.kind === 'seq' && !node.flow && node.items.length > 0) {
      const lines: string[] = [];
      for (const item of node.items) {
        const step = this.#column(depth + 1) - this.#column(depth);
        if (
          this.#layout.compactMap &&
          step >= 2 &&
          item.kind === 'map' &&
          !item.flow &&
          item.entries.length > 0
        ) {
          // `- a: 1` with the map's other keys under `a`.
          const anchor = this.#anchor(item.anchor);
          const inner = this.block(item, depth + 1);
          const dash = `${pad}-`.padEnd(this.#column(depth + 1), ' ');
          lines.push(`${dash}${anchor}${(inner[0] ?? '').trimStart()}`, ...inner.slice(1));
          continue;
        }
        lines.push(...this.#afterKey(`${pad}-`, item, depth));
      }
      return lines;
    }
    return [`${pad}${this.flow(node, depth, false)}`];
  }

  /** `head` is `key:` or `-`; the value follows on the same line or below it. */
  #afterKey(head: string, value: Node, depth: number): string[] {
    if (value.kind === 'scalar' && (value.style === 'literal' || value.style === 'folded')) {
      const step = this.#column(depth + 1) - this.#column(depth);
      const indicator = `${value.style === 'literal' ? '|' : '>'}${value.indentation ? step : ''}${value.chomp}`;
      const pad = this.#pad(depth + 1);
      const body = value.text.split('\n').map((line) => (line === '' ? '' : `${pad}${line}`));
      return [`${head} ${this.#anchor(value.anchor)}${indicator}${this.#comment()}`, ...body];
    }
    const isBlockCollection =
      (value.kind === 'map' && !value.flow && value.entries.length > 0) ||
      (value.kind === 'seq' && !value.flow && value.items.length > 0);
    if (!isBlockCollection) return [`${head} ${this.flow(value, depth, false)}${this.#comment()}`];
    const nested = value.kind === 'seq' && this.#layout.compactSeq && head.endsWith(':') ? depth : depth + 1;
    const anchor = this.#anchor(value.anchor).trimEnd();
    return [`${head}${anchor ? ` ${anchor}` : ''}${this.#comment()}`, ...this.block(value, nested)];
  }
}

/** A YAML document as text. */
export const yamlDocument: fc.Arbitrary<string> = fc
  .tuple(fc.array(node, { minLength: 1, maxLength: 4 }), node, layout)
  .map(([definitions, body, layout]) => {
    const renderer = new Renderer(layout);
    // Anchored values first, so that the body's aliases and merges mostly find them.
    const root: MapNode = {
      kind: 'map',
      flow: false,
      anchor: undefined,
      entries: [
        ...definitions.map((value, index) => ({
          key: { text: `def${index}`, quoted: false },
          value: value.kind === 'alias' ? value : { ...value, anchor: index },
          explicit: false,
        })),
        { key: { text: 'body', quoted: false }, value: body, explicit: false },
      ],
    };
    const lines = renderer.block(root, 0);
    if (layout.marker !== 'none') lines.unshift('---');
    if (layout.marker === 'both') lines.push('...');
    const preamble = layout.marker === 'none' ? layout.preamble : layout.preamble.replace('---\n', '');
    return `${preamble}${lines.join(layout.crlf ? '\r\n' : '\n')}\n`;
  });
