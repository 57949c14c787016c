import { distance } from 'fastest-levenshtein';

/** `a` with two neighbouring characters swapped is `b` (`pasue` for `pause`): the commonest typo. */
function isTransposition(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let index = 0;
  while (index < a.length && a[index] === b[index]) index += 1;
  return (
    index + 1 < a.length &&
    a[index] === b[index + 1] &&
    a[index + 1] === b[index] &&
    a.slice(index + 2) === b.slice(index + 2)
  );
}

/** Edits from one to the other, a swap of neighbours counting as one edit rather than two. */
function typoDistance(a: string, b: string): number {
  return isTransposition(a, b) ? 1 : distance(a, b);
}

/**
 * The candidate the input was most likely meant to be, or undefined when none is close enough to
 * be a typo. Case is ignored, so `Schedule` suggests `schedule`.
 */
export function didYouMean(input: string, candidates: Iterable<string>): string | undefined {
  const list = [...candidates];
  if (list.length === 0 || input.length === 0) return undefined;
  const lowered = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of list) {
    const edits = typoDistance(lowered, candidate.toLowerCase());
    if (edits === 0) return candidate;
    if (edits < bestDistance) {
      best = candidate;
      bestDistance = edits;
    }
  }
  const tolerance = Math.max(1, Math.floor(Math.max(best?.length ?? 0, lowered.length) / 3));
  return bestDistance <= tolerance ? best : undefined;
}

/** `; did you mean "x"?` or an empty string, for the end of a message. */
export function suggestionSuffix(input: string, candidates: Iterable<string>): string {
  const suggestion = didYouMean(input, candidates);
  return suggestion === undefined ? '' : `; did you mean "${suggestion}"?`;
}

/** A readable list of names for a message: `a, b, c`, or `(none)`. */
export function listNames(names: Iterable<string>): string {
  const list = [...names];
  return list.length === 0 ? '(none)' : list.join(', ');
}
