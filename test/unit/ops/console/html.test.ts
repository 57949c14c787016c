import { describe, expect, it } from 'vitest';
import { counts, duration, relative, utc } from '../../../../src/ops/console/views/format.js';
import { escapeHtml, html, trusted } from '../../../../src/ops/console/views/html.js';

describe('html templates', () => {
  it('escape every interpolated text, including quotes that would end an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    expect(html`<p title="${'" onmouseover="x'}">${'<b>'}</p>`.value).toBe(
      '<p title="&quot; onmouseover=&quot;x">&lt;b&gt;</p>',
    );
  });

  it('place nested templates and trusted markup as markup, lists item by item, and absent values as nothing', () => {
    const items = ['<1>', '2'].map((text) => html`<li>${text}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}${trusted('<hr>')}`.value).toBe(
      '<ul><li>&lt;1&gt;</li><li>2</li></ul>0<hr>',
    );
  });
});

describe('formats', () => {
  it('show a moment as UTC to the second, and text that is no date as it is', () => {
    expect(utc('2026-11-25T20:06:36.120+01:00')).toBe('2026-11-25 19:06:36 UTC');
    expect(utc('soon')).toBe('soon');
  });

  it('say how far a moment is from now, in the past or ahead', () => {
    const now = '2026-11-25T20:00:00.000Z';
    expect(relative('2026-11-25T19:55:00.000Z', now)).toBe('5 min ago');
    expect(relative('2026-11-25T23:00:00.000Z', now)).toBe('in 3 h');
    expect(relative('2026-11-20T20:00:00.000Z', now)).toBe('5 days ago');
    expect(relative('2026-11-25T19:59:50.000Z', now)).toBe('just now');
  });

  it('give durations in the unit a person reads', () => {
    expect([
      duration(850),
      duration(12_340),
      duration(245_000),
      duration(7_380_000),
      duration(undefined),
    ]).toEqual(['850 ms', '12.3 s', '4 min 05 s', '2 h 03 min', '–']);
  });

  it('name only the outcomes a run had among its targets', () => {
    expect(counts({ total: 3, succeeded: 2, skipped: 0, failed: 1, planned: 0 })).toBe(
      '3 targets: 2 succeeded, 1 failed',
    );
    expect(counts({ total: 0, succeeded: 0, skipped: 0, failed: 0, planned: 0 })).toBe('0 targets');
  });
});
