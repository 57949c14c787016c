/**
 * Colour for people, never for pipes or files. No dependency: `node:util` `styleText` exists
 * from Node 20.12, but whether it checks the stream (and which one: it looks at process.stdout
 * unless told otherwise) and how it reads `NO_COLOR` changed between releases, so the decision is
 * made here, once per stream, the same way on every Node the package supports.
 */

export type Style = 'red' | 'yellow' | 'green' | 'cyan' | 'bold' | 'dim';

/** SGR codes to turn each style on and off (off resets only that attribute, so styles nest). */
const SGR: Record<Style, readonly [number, number]> = {
  red: [31, 39],
  yellow: [33, 39],
  green: [32, 39],
  cyan: [36, 39],
  bold: [1, 22],
  dim: [2, 22],
};

/** What colour decisions need to know about a stream. */
export interface ColorStream {
  readonly isTTY?: boolean;
}

/**
 * True when `stream` is a terminal, `NO_COLOR` is unset or empty (https://no-color.org: any
 * non-empty value disables colour) and `TERM` is not `dumb`.
 */
export function colorEnabled(stream: ColorStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
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
    const [on, off] = SGR[style];
    return `\u001b[${on}m${text}\u001b[${off}m`;
  },
};

/** The painter for text written to `stream`. */
export function painterFor(stream: ColorStream, env: NodeJS.ProcessEnv = process.env): Painter {
  return colorEnabled(stream, env) ? ansi : plain;
}

/** Escape sequences removed: what a reader of the terminal sees. */
export function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching ESC is the point
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
}

/** Run and target outcomes: done green, half-done or not-done yellow, failed red. */
export function outcomeStyle(outcome: string): Style | undefined {
  switch (outcome) {
    case 'succeeded':
      return 'green';
    case 'partial':
    case 'skipped':
    case 'missed':
      return 'yellow';
    case 'failed':
      return 'red';
    case 'planned':
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
