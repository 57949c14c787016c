import { yaml } from './package.js';

/**
 * More aliases than this and a file is refused before it is parsed. The parser spends about a
 * kilobyte and 15 µs on each node it reads, so a 3 MB file of aliases of one anchor (750,000 of
 * them) took 14 s and 1.2 GB to parse before the budget of MAX_ALIAS_VALUES could refuse it. A
 * policy needs far fewer: a merge key on each of 10,000 jobs is 10,000.
 */
export const MAX_ALIASES = 50_000;

/** What may come right before an alias: the start of a line or a node, a flow indicator, a key's colon. */
const BEFORE_ALIAS = new Set([' ', '\t', '\n', '\r', '[', '{', ',', ':']);
/** What may not come right after the `*` of an alias: the name starts there. */
const NOT_IN_NAME = new Set([' ', '\t', '\n', '\r', ',', '[', ']', '{', '}']);

/**
 * The offset of the alias past MAX_ALIASES, or undefined when the text has no more than that.
 * Counting `*`s that could start an alias is enough for almost every policy (crons and globs are
 * quoted or followed by a blank); only a text with more of them is lexed, by the `yaml` package's
 * own lexer, so a `*` inside a quoted or block scalar is not taken for an alias.
 */
export function aliasPastLimit(text: string): number | undefined {
  let candidates = 0;
  for (let at = text.indexOf('*'); at !== -1 && candidates <= MAX_ALIASES; at = text.indexOf('*', at + 1)) {
    const before = at === 0 ? ' ' : (text[at - 1] as string);
    const after = text[at + 1];
    if (BEFORE_ALIAS.has(before) && after !== undefined && !NOT_IN_NAME.has(after)) candidates += 1;
  }
  if (candidates <= MAX_ALIASES) return undefined;

  let offset = 0;
  let aliases = 0;
  let scalarBody = false;
  for (const lexeme of new yaml.Lexer().lex(text)) {
    // a scalar's text follows its marker lexeme, and may start with `*`
    const type: string | null = scalarBody ? 'scalar-body' : yaml.CST.tokenType(lexeme);
    scalarBody = type === 'scalar';
    if (type === 'alias' && ++aliases > MAX_ALIASES) return offset;
    // the markers are the lexer's own, not characters of the text (as the parser counts offsets)
    if (type !== 'scalar' && type !== 'doc-mode' && type !== 'flow-error-end') offset += lexeme.length;
  }
  return undefined;
}
