import { describe, expect, it } from 'vitest';
import {
  colorEnabled,
  outcomeStyle,
  painterFor,
  plain,
  severityStyle,
  stripAnsi,
} from '../../../src/cli/color.js';
import { formatPlans, formatSummary } from '../../../src/cli/summary-view.js';
import { alignColumns, styled } from '../../../src/cli/table.js';
import { finding, runSummary } from '../../helpers/summaries.js';

const TTY = { isTTY: true };
const PIPE = { isTTY: false };
const ESC = '\u001b';

describe('colour only for a terminal, and never with NO_COLOR', () => {
  it('colours a terminal when NO_COLOR is unset or empty', () => {
    expect(colorEnabled(TTY, {})).toBe(true);
    expect(colorEnabled(TTY, { NO_COLOR: '' })).toBe(true);
    expect(painterFor(TTY, {}).paint('green', 'ok')).toBe(`${ESC}[32mok${ESC}[39m`);
  });

  it.each(['1', 'true', '0', 'anything'])(
    'does not colour when NO_COLOR=%s (any non-empty value)',
    (value) => {
      expect(colorEnabled(TTY, { NO_COLOR: value })).toBe(false);
      expect(painterFor(TTY, { NO_COLOR: value }).paint('red', 'failed')).toBe('failed');
    },
  );

  it('does not colour a pipe or a file, nor a dumb terminal', () => {
    expect(colorEnabled(PIPE, {})).toBe(false);
    expect(colorEnabled({}, {})).toBe(false);
    expect(colorEnabled(TTY, { TERM: 'dumb' })).toBe(false);
    expect(painterFor(PIPE, {}).paint('green', 'ok')).toBe('ok');
  });

  it('leaves no escape code in a summary printed with NO_COLOR or to a pipe', () => {
    const summary = runSummary({ succeeded: 1, failed: 1, findings: [finding('r', 's', 'critical')] });
    for (const painter of [painterFor(TTY, { NO_COLOR: '1' }), painterFor(PIPE, {})]) {
      expect(formatSummary(summary, { painter })).not.toContain(ESC);
      expect(formatPlans([summary], painter)).not.toContain(ESC);
    }
    expect(formatSummary(summary, { painter: painterFor(TTY, {}) })).toContain(ESC);
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
  const colour = painterFor(TTY, {});

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
