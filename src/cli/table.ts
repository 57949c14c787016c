import { type Painter, plain, type Style } from './color.js';

/** A cell shown in a style when the painter colours, plain otherwise. */
export interface StyledCell {
  readonly text: string;
  readonly style?: Style;
}

export type Cell = string | StyledCell;

export function styled(text: string, style: Style | undefined): StyledCell {
  return { text, style };
}

function textOf(cell: Cell): string {
  return typeof cell === 'string' ? cell : cell.text;
}

/**
 * Rows as left-aligned columns two spaces apart, trailing spaces trimmed. Widths come from the
 * plain text and the padding goes outside the colour, so columns line up with colour on or off.
 */
export function alignColumns(rows: readonly (readonly Cell[])[], painter: Painter = plain): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, textOf(cell).length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, index) => {
          const text = textOf(cell);
          const padding = ' '.repeat((widths[index] ?? 0) - text.length);
          return typeof cell === 'string' ? text + padding : painter.paint(cell.style, text) + padding;
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
