import type { SourceLocation } from '../errors.js';

/**
 * Turns offsets into lines and columns, counting line breaks in the text itself: the parser's
 * LineCounter misses the line breaks inside a scalar it reads while recovering from a syntax
 * error, which put later problems past the end of their line. The line starts are found on the
 * first call: a valid policy whose positions nobody asks for never needs them.
 */
export function lineLocator(text: string, file: string): (offset: number) => SourceLocation {
  let lineStarts: number[] | undefined;
  return (offset) => {
    lineStarts ??= findLineStarts(text);
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((lineStarts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return { file, line: low + 1, col: offset - (lineStarts[low] as number) + 1 };
  };
}

function findLineStarts(text: string): number[] {
  const starts = [0];
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1))
    starts.push(index + 1);
  return starts;
}
