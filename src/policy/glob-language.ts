import picomatch from 'picomatch';

/**
 * The set of names a glob matches, as an automaton, so two globs can be proven to share a name (or
 * not) without a fleet: `dev-a*` and `dev-?lpha` both match `dev-alpha`; `dev-a*` and `dev-b*`
 * share nothing. The automaton is built from the regular expression picomatch itself compiles the
 * glob to (`dot: true`, as targets match), so braces, ranges, classes and extglobs mean what they
 * mean at run time. Lookarounds (picomatch's "not `.` or `..`", "not empty", `!(…)`) are left
 * out, which can only add names: "no name in common" stays a proof, and a name found is checked
 * against picomatch before anything is said of it (see `sharedName`).
 */

/** Inclusive code-unit ranges, sorted and disjoint. */
type Ranges = readonly (readonly [number, number])[];

interface Nfa {
  readonly start: number;
  readonly accept: number;
  readonly epsilon: readonly (readonly number[])[];
  readonly edges: readonly (readonly { readonly to: number; readonly set: Ranges }[])[];
}

const MAX_CODE = 0xffff;
/** Names hold no line breaks or "/", and what a person writes starts at the space. */
const NAME_CHARS: Ranges = [
  [0x20, 0x2e],
  [0x30, MAX_CODE],
];

const compiled = new Map<string, Nfa>();

/** The automaton of the names any of `globs` matches (and a few more: see above); none for no globs. */
function globLanguage(globs: readonly string[]): Nfa {
  const id = globs.join('\u0000');
  let nfa = compiled.get(id);
  if (!nfa) {
    const source = globs.map((glob) => `(?:${picomatch.makeRe(glob, { dot: true }).source})`).join('|');
    // no glob: a language without names (a class of no character)
    nfa = new RegexReader(source === '' ? '[]' : source).read();
    if (compiled.size > 1000) compiled.clear();
    compiled.set(id, nfa);
  }
  return nfa;
}

/** One part of an intersection: names one of the globs matches, or with `negated`, names none matches. */
export interface LanguagePart {
  readonly globs: readonly string[];
  readonly negated?: boolean;
}

/**
 * The shortest name in every non-negated part's language and in no negated part's, or undefined
 * when there is none; `unknown` when the search grew past `maxStates` (a very large product).
 */
export function sharedName(
  parts: readonly LanguagePart[],
  maxStates = 50_000,
): string | undefined | 'unknown' {
  const automata = parts.map((part) => ({ nfa: globLanguage(part.globs), negated: part.negated === true }));
  const atoms = alphabet(automata.map(({ nfa }) => nfa));
  const begin = automata.map(({ nfa }) => closure(nfa, [nfa.start]));
  const seen = new Map<string, { from: string | undefined; char: number }>([
    [key(begin), { from: undefined, char: 0 }],
  ]);
  let frontier: { sets: number[][]; id: string }[] = [{ sets: begin, id: key(begin) }];
  while (frontier.length > 0) {
    const next: typeof frontier = [];
    for (const { sets, id } of frontier) {
      for (const atom of atoms) {
        const moved = automata.map(({ nfa }, index) => step(nfa, sets[index] as number[], atom));
        // a set no state of a non-negated part survives in can never accept again
        if (automata.some(({ negated }, index) => !negated && (moved[index] as number[]).length === 0))
          continue;
        const movedId = key(moved);
        if (seen.has(movedId)) continue;
        seen.set(movedId, { from: id, char: atom });
        if (seen.size > maxStates) return 'unknown';
        const accepted = automata.every(
          ({ nfa, negated }, index) => (moved[index] as number[]).includes(nfa.accept) !== negated,
        );
        if (accepted) return spell(seen, movedId);
        next.push({ sets: moved, id: movedId });
      }
    }
    frontier = next;
  }
  return undefined;
}

function key(sets: readonly (readonly number[])[]): string {
  return sets.map((set) => set.join(',')).join('|');
}

function spell(seen: ReadonlyMap<string, { from: string | undefined; char: number }>, id: string): string {
  const chars: number[] = [];
  for (let at = seen.get(id); at?.from !== undefined; at = seen.get(at.from)) chars.push(at.char);
  return String.fromCharCode(...chars.reverse());
}

function closure(nfa: Nfa, states: readonly number[]): number[] {
  const found = new Set(states);
  const stack = [...states];
  while (stack.length > 0) {
    for (const to of nfa.epsilon[stack.pop() as number] ?? []) {
      if (!found.has(to)) {
        found.add(to);
        stack.push(to);
      }
    }
  }
  return [...found].sort((a, b) => a - b);
}

function step(nfa: Nfa, states: readonly number[], char: number): number[] {
  const targets: number[] = [];
  for (const state of states)
    for (const edge of nfa.edges[state] ?? []) if (contains(edge.set, char)) targets.push(edge.to);
  return targets.length === 0 ? [] : closure(nfa, targets);
}

function contains(set: Ranges, char: number): boolean {
  return set.some(([low, high]) => low <= char && char <= high);
}

/** Characters a person would read in an example, best first: each class of the alphabet is shown by one of them. */
const READABLE = 'abcdefghijklmnopqrstuvwxyz0123456789-_.ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * One character of each class of characters no range of the automata tells apart: enough to try
 * every transition. Each is the most readable character of its class, and the most readable
 * classes come first.
 */
function alphabet(automata: readonly Nfa[]): number[] {
  const cuts = new Set<number>();
  for (const [low, high] of NAME_CHARS) cuts.add(low).add(high + 1);
  for (const nfa of automata)
    for (const edges of nfa.edges)
      for (const edge of edges) for (const [low, high] of edge.set) cuts.add(low).add(high + 1);
  const bounds = [...cuts].sort((a, b) => a - b);
  const atoms: number[] = [];
  for (const [index, low] of bounds.entries()) {
    const high = (bounds[index + 1] ?? MAX_CODE + 1) - 1;
    if (high < low || !contains(NAME_CHARS, low)) continue;
    const readable = [...READABLE]
      .map((char) => char.charCodeAt(0))
      .find((code) => code >= low && code <= high);
    atoms.push(readable ?? low);
  }
  // tried in this order, so the example found first reads best
  const rank = (code: number) => READABLE.indexOf(String.fromCharCode(code)) >>> 0;
  return atoms.sort((a, b) => rank(a) - rank(b));
}

/** Reads the regular expressions picomatch writes into an automaton (Thompson's construction). */
class RegexReader {
  readonly #source: string;
  #at = 0;
  readonly #epsilon: number[][] = [];
  readonly #edges: { to: number; set: Ranges }[][] = [];

  constructor(source: string) {
    this.#source = source;
  }

  read(): Nfa {
    const { start, end } = this.#alternation();
    if (this.#at < this.#source.length)
      throw new Error(`unexpected "${this.#source[this.#at]}" in /${this.#source}/`);
    return { start, accept: end, epsilon: this.#epsilon, edges: this.#edges };
  }

  #state(): number {
    this.#epsilon.push([]);
    this.#edges.push([]);
    return this.#epsilon.length - 1;
  }

  #link(from: number, to: number): void {
    (this.#epsilon[from] as number[]).push(to);
  }

  /** Two new states, unlinked. */
  #pair(): { start: number; end: number } {
    return { start: this.#state(), end: this.#state() };
  }

  /** A piece that reads one character of `set`, or none at all. */
  #fragment(set?: Ranges): { start: number; end: number } {
    const piece = this.#pair();
    if (set) (this.#edges[piece.start] as { to: number; set: Ranges }[]).push({ to: piece.end, set });
    else this.#link(piece.start, piece.end);
    return piece;
  }

  #alternation(): { start: number; end: number } {
    const branches = [this.#sequence()];
    while (this.#source[this.#at] === '|') {
      this.#at += 1;
      branches.push(this.#sequence());
    }
    if (branches.length === 1) return branches[0] as { start: number; end: number };
    const whole = this.#pair();
    for (const branch of branches) {
      this.#link(whole.start, branch.start);
      this.#link(branch.end, whole.end);
    }
    return whole;
  }

  #sequence(): { start: number; end: number } {
    const whole = this.#pair();
    let last = whole.start;
    while (
      this.#at < this.#source.length &&
      this.#source[this.#at] !== '|' &&
      this.#source[this.#at] !== ')'
    ) {
      const piece = this.#quantified(this.#atom());
      this.#link(last, piece.start);
      last = piece.end;
    }
    this.#link(last, whole.end);
    return whole;
  }

  #quantified(piece: { start: number; end: number }): { start: number; end: number } {
    const char = this.#source[this.#at];
    let min = 1;
    let max = 1;
    if (char === '*' || char === '+' || char === '?') {
      this.#at += 1;
      [min, max] = char === '*' ? [0, Infinity] : char === '+' ? [1, Infinity] : [0, 1];
    } else if (char === '{' && /^\{\d+(,\d*)?\}/.test(this.#source.slice(this.#at))) {
      const [, low, high] = /^\{(\d+)(?:,(\d*))?\}/.exec(this.#source.slice(this.#at)) as RegExpExecArray;
      this.#at += (/^\{[^}]*\}/.exec(this.#source.slice(this.#at)) as RegExpExecArray)[0].length;
      // only inside lookarounds, which are dropped: a bounded count reads as "at least min"
      [min, max] = [Number(low), high === undefined ? Number(low) : Infinity];
    } else return piece;
    if (this.#source[this.#at] === '?') this.#at += 1; // lazy: the same language
    if (min <= 1 && max === 1) {
      if (min === 0) this.#link(piece.start, piece.end);
      return piece;
    }
    // at least min: the piece, then a loop; a piece repeated min times is approximated by min = 1
    if (max === Infinity) this.#link(piece.end, piece.start);
    if (min === 0) this.#link(piece.start, piece.end);
    return piece;
  }

  #atom(): { start: number; end: number } {
    const char = this.#source[this.#at] as string;
    this.#at += 1;
    if (char === '(') {
      let lookaround = false;
      if (this.#source[this.#at] === '?') {
        const kind = /^\?(:|=|!|<=|<!)/.exec(this.#source.slice(this.#at));
        if (!kind) throw new Error(`unknown group in /${this.#source}/`);
        lookaround = kind[1] !== ':';
        this.#at += kind[0].length;
      }
      const inner = this.#alternation();
      if (this.#source[this.#at] !== ')') throw new Error(`unclosed group in /${this.#source}/`);
      this.#at += 1;
      // a lookaround consumes nothing; dropping its condition only adds names
      return lookaround ? this.#fragment() : inner;
    }
    if (char === '^' || char === '$') return this.#fragment();
    if (char === '.')
      return this.#fragment(
        complement([
          [0x0a, 0x0a],
          [0x0d, 0x0d],
          [0x2028, 0x2029],
        ]),
      );
    if (char === '[') return this.#fragment(this.#characterClass());
    if (char === '\\') return this.#fragment(this.#escape());
    return this.#fragment([[char.charCodeAt(0), char.charCodeAt(0)]]);
  }

  #escape(): Ranges {
    const char = this.#source[this.#at] as string;
    this.#at += 1;
    const classes: Record<string, Ranges> = {
      d: [[0x30, 0x39]],
      w: [
        [0x30, 0x39],
        [0x41, 0x5a],
        [0x5f, 0x5f],
        [0x61, 0x7a],
      ],
      s: [
        [0x09, 0x0d],
        [0x20, 0x20],
      ],
    };
    const known = classes[char.toLowerCase()];
    if (known) return char === char.toLowerCase() ? known : complement(known);
    const hex = char === 'x' ? 2 : char === 'u' ? 4 : 0;
    if (hex > 0) {
      const code = Number.parseInt(this.#source.slice(this.#at, this.#at + hex), 16);
      this.#at += hex;
      return [[code, code]];
    }
    const code = { n: 0x0a, r: 0x0d, t: 0x09 }[char] ?? char.charCodeAt(0);
    return [[code, code]];
  }

  #characterClass(): Ranges {
    const negated = this.#source[this.#at] === '^';
    if (negated) this.#at += 1;
    const ranges: [number, number][] = [];
    while (this.#at < this.#source.length && this.#source[this.#at] !== ']') {
      const low = this.#classChar();
      if (this.#source[this.#at] === '-' && this.#source[this.#at + 1] !== ']') {
        this.#at += 1;
        const high = this.#classChar();
        ranges.push([low[0]?.[0] ?? 0, high[0]?.[1] ?? 0]);
      } else ranges.push(...low.map(([a, b]) => [a, b] as [number, number]));
    }
    this.#at += 1;
    const set = normalize(ranges);
    return negated ? complement(set) : set;
  }

  #classChar(): Ranges {
    const char = this.#source[this.#at] as string;
    this.#at += 1;
    return char === '\\' ? this.#escape() : [[char.charCodeAt(0), char.charCodeAt(0)]];
  }
}

function normalize(ranges: [number, number][]): Ranges {
  const sorted = ranges.filter(([low, high]) => low <= high).sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [low, high] of sorted) {
    const last = merged[merged.length - 1];
    if (last && low <= last[1] + 1) last[1] = Math.max(last[1], high);
    else merged.push([low, high]);
  }
  return merged;
}

function complement(set: Ranges): Ranges {
  const result: [number, number][] = [];
  let next = 0;
  for (const [low, high] of normalize(set.map(([a, b]) => [a, b]))) {
    if (low > next) result.push([next, low - 1]);
    next = high + 1;
  }
  if (next <= MAX_CODE) result.push([next, MAX_CODE]);
  return result;
}
