/**
 * What a glob of a target or a hold may be. picomatch reads any text: a leading `!` negates the
 * whole glob (`!dev-alpha` is every workgroup but dev-alpha), and a `[` or `{` that is never
 * closed is the character itself. Neither is what a person listing workspaces means, so both are
 * refused, by the policy's targets and by `nightshift hold` alike.
 */

/** Whether a glob negates: a leading `!`, or a `!(…)` extglob anywhere in it. */
export function negates(glob: string): boolean {
  return glob.startsWith('!') || /(^|[^\\])!\(/.test(glob);
}

const CLOSERS: Readonly<Record<string, string>> = { '{': '}', '(': ')' };

/** Why `glob` would not be read as its writer meant (an unclosed `[`, `{` or `(`), or undefined. */
export function globSyntaxProblem(glob: string): string | undefined {
  const open: { char: string; at: number }[] = [];
  let classAt: number | undefined;
  for (let at = 0; at < glob.length; at += 1) {
    const char = glob[at] as string;
    if (char === '\\') {
      at += 1;
      continue;
    }
    if (classAt !== undefined) {
      // a "]" first in a class (or after its "!" or "^") is a member, not the end
      const first = at === classAt + 1 || (at === classAt + 2 && '!^'.includes(glob[classAt + 1] as string));
      if (char === ']' && !first) classAt = undefined;
      continue;
    }
    if (char === '[') classAt = at;
    else if (char in CLOSERS) open.push({ char, at });
    else if (open.length > 0 && char === CLOSERS[(open[open.length - 1] as { char: string }).char])
      open.pop();
  }
  const unclosed =
    classAt !== undefined
      ? { char: '[', close: ']' }
      : open[0] && { char: open[0].char, close: CLOSERS[open[0].char] };
  if (!unclosed) return undefined;
  return `"${unclosed.char}" is never closed in "${glob}": close it with "${unclosed.close}", or write "\\${unclosed.char}" for the character itself`;
}
