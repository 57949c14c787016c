import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The rows of docs/windows.md's comparison table, by their first cell, each a list of cells. */
function comparison(): Map<string, string[]> {
  const text = readFileSync(new URL('../../../docs/windows.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('## Compared with other schedulers'), text.indexOf('## Migrating'));
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| |'))
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| | \|$/g, '').trim()));
  return new Map(rows.map(([first = '', ...rest]) => [first, rest]));
}

/** Columns: AWS Instance Scheduler, kube-downscaler, Cloud Custodian, nightshift. */
describe("docs/windows.md's comparison says what the peers' own code does", () => {
  it('AWS Instance Scheduler reports hours saved (its Operational Insights dashboard), not money', () => {
    const [aws] = comparison().get('hours and money saved') ?? [];
    expect(aws).toMatch(/hours saved/);
    expect(aws).toMatch(/Operational Insights dashboard/);
    expect(aws).toMatch(/no money/);
  });

  it('kube-downscaler restores only what it scaled down, from its original-replicas annotation: partly ownership', () => {
    const rows = comparison();
    const [, knows] = rows.get('knows which stops were its own') ?? [];
    expect(knows).toMatch(/^partly/);
    expect(knows).toContain('downscaler/original-replicas');
    const [, handsBack] = rows.get('hands back only its own stops') ?? [];
    expect(handsBack).toMatch(/^yes/);
  });
});
