import { closest, distance } from 'fastest-levenshtein';

/**
 * The candidate the input was most likely meant to be, or undefined when none is close enough to
 * be a typo. Case is ignored, so `Schedule` suggests `schedule`.
 */
export function didYouMean(input: string, candidates: Iterable<string>): string | undefined {
  const list = [...candidates];
  if (list.length === 0 || input.length === 0) return undefined;
  const lowered = input.toLowerCase();
  const exactIgnoringCase = list.find((candidate) => candidate.toLowerCase() === lowered);
  if (exactIgnoringCase !== undefined) return exactIgnoringCase;
  const best = closest(
    lowered,
    list.map((candidate) => candidate.toLowerCase()),
  );
  const index = list.findIndex((candidate) => candidate.toLowerCase() === best);
  const tolerance = Math.max(1, Math.floor(Math.max(best.length, lowered.length) / 3));
  return distance(lowered, best) <= tolerance ? list[index] : undefined;
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
