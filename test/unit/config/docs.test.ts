import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EnvironmentSchema, VARIABLES } from '../../../src/config/index.js';

const doc = readFileSync(fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url)), 'utf8');

/** The rows of the doc's table: variable, type, default, meaning. */
const rows = [...doc.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$/gm)].map(
  (match) => ({
    name: match[1] as string,
    type: (match[2] as string).trim(),
    defaultText: (match[3] as string).trim(),
    meaning: (match[4] as string).trim(),
  }),
);

describe('docs/configuration.md', () => {
  it('documents every variable of the schema, once, and no other', () => {
    expect(rows.map((row) => row.name).sort()).toEqual([...VARIABLES].sort());
    expect(new Set(rows.map((row) => row.name)).size).toBe(rows.length);
  });

  it('gives every variable a type, a default and a meaning', () => {
    for (const row of rows) {
      expect(row.type, row.name).not.toBe('');
      expect(row.defaultText, row.name).not.toBe('');
      expect(row.meaning, row.name).not.toBe('');
    }
  });

  it('states each default as the schema has it', () => {
    const shape = EnvironmentSchema.shape as Record<string, { parse(value: undefined): unknown }>;
    for (const row of rows) {
      const value = shape[row.name]?.parse(undefined);
      if (typeof value === 'number') expect(row.defaultText, row.name).toBe(String(value));
      else if (typeof value === 'string') expect(row.defaultText, row.name).toBe(`\`${value}\``);
      else if (typeof value === 'boolean') expect(row.defaultText, row.name).toBe('unset');
    }
  });
});
