import { stripVTControlCharacters as stripAnsi } from 'node:util';
import { describe, expect, it } from 'vitest';
import { colorEnabled, outcomeStyle, painterFor, plain, severityStyle } from '../../../src/cli/color.js';
import { formatPlans, formatSummary } from '../../../src/cli/summary-view.js';
import { alignColumns, styled } from '../../../src/cli/table.js';
import { type Environment, loadSettings } from '../../../src/config/index.js';
import { finding, runSummary } from '../../helpers/summaries.js';

const TTY = { isTTY: true };
const PIPE = { isTTY: false };
const ESC = '\u001b';

/** The terminal settings a command gets in `env`. */
const terminal = (env: Environment) => loadSettings(env).terminal;

describe('colour only for a terminal, and never with NO_COLOR', () => {
  it('colours a terminal when NO_COLOR is unset or empty', () => {
    expect(colorEnabled(TTY, terminal({}))).toBe(true);
    expect(colorEnabled(TTY, terminal({ NO_COLOR: '' }))).toBe(true);
    expect(painterFor(TTY, terminal({})).paint('green', 'ok')).toBe(`${ESC}[32mok${ESC}[39m`);
  });

  it.each(['1', 'true', '0', 'anything'])(
    'does not colour when NO_COLOR=%s (any non-empty value)',
    (value) => {
      expect(colorEnabled(TTY, terminal({ NO_COLOR: value }))).toBe(false);
      expect(painterFor(TTY, terminal({ NO_COLOR: value })).paint('red', 'failed')).toBe('failed');
    },
  );

  it('does not colour a pipe or a file, nor a dumb terminal', () => {
    expect(colorEnabled(PIPE, terminal({}))).toBe(false);
    expect(colorEnabled({}, terminal({}))).toBe(false);
    expect(colorEnabled(TTY, terminal({ TERM: 'dumb' }))).toBe(false);
    expect(painterFor(PIPE, terminal({})).paint('green', 'ok')).toBe('ok');
  });

  it('leaves no escape code in a summary printed with NO_COLOR or to a pipe', () => {
    const summary = runSummary({ succeeded: 1, failed: 1, findings: [finding('r', 's', 'critical')] });
    for (const painter of [painterFor(TTY, terminal({ NO_COLOR: '1' })), painterFor(PIPE, terminal({}))]) {
      expect(formatSummary(summary, { painter })).not.toContain(ESC);
      expect(formatPlans([summary], painter)).not.toContain(ESC);
    }
    expect(formatSummary(summary, { painter: painterFor(TTY, terminal({})) })).toContain(ESC);
  });

  it('writes the same escape codes for every style as the terminal always got (each turns off only its own attribute)', () => {
    const paint = painterFor(TTY, terminal({}));
    expect(paint.paint('red', 'x')).toBe(`${ESC}[31mx${ESC}[39m`);
    expect(paint.paint('yellow', 'x')).toBe(`${ESC}[33mx${ESC}[39m`);
    expect(paint.paint('green', 'x')).toBe(`${ESC}[32mx${ESC}[39m`);
    expect(paint.paint('cyan', 'x')).toBe(`${ESC}[36mx${ESC}[39m`);
    expect(paint.paint('bold', 'x')).toBe(`${ESC}[1mx${ESC}[22m`);
    expect(paint.paint('dim', 'x')).toBe(`${ESC}[2mx${ESC}[22m`);
    expect(paint.paint('red', '')).toBe('');
    expect(paint.paint(undefined, 'x')).toBe('x');
  });

  it('colours outcomes and severities by how good they are', () => {
    expect(outcomeStyle('succeeded')).toBe('green');
    expect(outcomeStyle('partial')).toBe('yellow');
    expect(outcomeStyle('skipped')).toBe('yellow');
    expect(outcomeStyle('failed')).toBe('red');
    expect(severityStyle('critical')).toBe('red');
    expect(severityStyle('warning')).toBe('yellow');
    expect(severityStyle('info')).toBeUndefined();
  });
});

describe('alignColumns with colour', () => {
  const rows = [
    ['JOB', 'OUTCOME', 'NOTE'],
    ['nightly-pause', styled('succeeded', 'green'), 'all paused'],
    ['drill', styled('failed', 'red'), ''],
    ['audit', styled('partial', 'yellow'), 'one workgroup refused'],
  ];
  const colour = painterFor(TTY, terminal({}));

  it('pads before colouring: the columns line up exactly as without colour', () => {
    const coloured = alignColumns(rows, colour);
    expect(coloured).toContain(ESC);
    expect(stripAnsi(coloured)).toBe(alignColumns(rows, plain));
    expect(alignColumns(rows, plain)).toBe(
      [
        'JOB            OUTCOME    NOTE',
        'nightly-pause  succeeded  all paused',
        'drill          failed',
        'audit          partial    one workgroup refused',
      ].join('\n'),
    );
  });

  it('keeps padding outside the escape codes, so a coloured cell is exactly its text', () => {
    const line = alignColumns(rows, colour).split('\n')[2] as string;
    expect(line).toBe(`drill          ${ESC}[31mfailed${ESC}[39m`);
  });

  it('lines up a run summary and a plan with colour on as with colour off', () => {
    const summary = runSummary({
      succeeded: 2,
      failed: 1,
      findings: [finding('allow-list/too-wide', 'ops')],
    });
    expect(stripAnsi(formatSummary(summary, { painter: colour }))).toBe(formatSummary(summary));
    expect(stripAnsi(formatPlans([summary], colour))).toBe(formatPlans([summary]));
  });
});
