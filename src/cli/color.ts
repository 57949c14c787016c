import { styleText } from 'node:util';
import type { Settings } from '../config/index.js';

/**
 * Colour for people, never for pipes or files. `node:util` `styleText` writes the escape codes;
 * whether to colour is decided here, once per stream, from the Settings (`NO_COLOR`, `TERM`), so
 * the decision follows the settings a command was given rather than the process's own environment,
 * which is what `styleText` would read itself.
 */

export type Style = 'red' | 'yellow' | 'green' | 'cyan' | 'bold' | 'dim';

/** What colour decisions need to know about a stream. */
export interface ColorStream {
  readonly isTTY?: boolean;
}

/** What colour decisions need to know about the terminal's settings. */
export type ColorSettings = Pick<Settings['terminal'], 'noColor' | 'dumb'>;

/**
 * True when `stream` is a terminal, `NO_COLOR` is unset or empty (https://no-color.org: any
 * non-empty value disables colour) and `TERM` is not `dumb`.
 */
export function colorEnabled(stream: ColorStream, terminal: ColorSettings): boolean {
  return !terminal.noColor && !terminal.dumb && stream.isTTY === true;
}

/** Paints text in a style, or returns it unchanged when colour is off. */
export interface Painter {
  readonly enabled: boolean;
  paint(style: Style | undefined, text: string): string;
}

/** The painter that never colours: what tests and pipes get. */
export const plain: Painter = { enabled: false, paint: (_style, text) => text };

const ansi: Painter = {
  enabled: true,
  paint(style, text) {
    if (!style || text === '') return text;
    return styleText(style, text, { validateStream: false });
  },
};

/** The painter for text written to `stream`. */
export function painterFor(stream: ColorStream, terminal: ColorSettings): Painter {
  return colorEnabled(stream, terminal) ? ansi : plain;
}

/** Run and target outcomes: done green, half-done or not-done yellow, failed red. */
export function outcomeStyle(outcome: string): Style | undefined {
  switch (outcome) {
    case 'succeeded':
      return 'green';
    case 'partial':
    case 'skipped':
    case 'missed':
    case 'cancelled':
    case 'rejected':
    case 'expired':
      return 'yellow';
    case 'failed':
    case 'halted':
      return 'red';
    case 'planned':
    case 'awaiting-approval':
      return 'cyan';
    default:
      return undefined;
  }
}

/** Finding severities: critical red, warning yellow, info plain. */
export function severityStyle(severity: string): Style | undefined {
  if (severity === 'critical') return 'red';
  if (severity === 'warning') return 'yellow';
  return undefined;
}
