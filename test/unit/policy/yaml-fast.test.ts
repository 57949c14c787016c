// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect, isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readYamlFast } from '../../../src/policy/yaml-fast.js';
import {
  MAX_ALIAS_EXPANSIONS,
  MAX_DEPTH,
  readYaml,
  readYamlDocument,
  type YamlSource,
} from '../../../src/policy/yaml-source.js';
import { NUMERIC_EDGES, yamlDocument } from './yaml-documents.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// Beside the generated documents' variables, every variable the example policies use.
const ENV = {
  A: 'from-a',
  B: '',
  OPS_WEBHOOK: 'https://hooks.example.com/ops',
  SECURITY_WEBHOOK: 'https://hooks.example.com/security',
  DRILL_BACKUP_ID: 'bk-0000',
  DEMO_BACKUP_ID: 'bk-0001',
  DEMO_UPTIME: 'Mon-Sun 00:01-00:02, Mon-Sun 00:03-00:04',
  TOKEN: 't0ken',
};
const LIMITS = { maxAliasExpansions: MAX_ALIAS_EXPANSIONS, maxDepth: MAX_DEPTH };

function yamlFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry.name) ? [relative(root, path)] : [];
  });
}

const configFiles = yamlFiles(join(root, 'config'));
const fixtureFiles = yamlFiles(join(root, 'test/fixtures/policies'));

/** The AST reader's `${VAR}` records, in its order, keyed as the fast reader keys them. */
function records(source: YamlSource): [string, string | undefined][] {
  return source.interpolatedBelow([]).map((path) => [path.join('\u0000'), source.templateOf(path)]);
}

/**
 * Reads `text` both ways. Where the fast reader answers, the AST reader must have no problem and
 * the same values (null prototypes, -0 and all) and the same `${VAR}` records.
 */
function compareReaders(text: string): 'same' | 'declined' {
  const document = readYamlDocument(text, 'doc.yaml', ENV);
  const fast = readYamlFast(text, ENV, LIMITS);
  if (fast === undefined) return 'declined';
  expect(document.problems).toEqual([]);
  // Not toStrictEqual: a map with a "constructor" key fools its type check.
  const same = isDeepStrictEqual(fast.value, document.value);
  expect(same, `fast ${inspect(fast.value)}\nAST  ${inspect(document.value)}`).toBe(true);
  // In the same order too: `secretParams` lists them in it.
  expect([...fast.interpolated]).toEqual(records(document));
  return 'same';
}

describe('the fast YAML reader (js-yaml) against the AST reader (yaml)', () => {
  it('finds the example policies and the invalid corpus to compare on', () => {
    expect(configFiles.length).toBeGreaterThanOrEqual(2);
    expect(fixtureFiles.length).toBeGreaterThanOrEqual(40);
  });

  it.each(configFiles)('reads the example %s on the fast path, to the same values and records', (file) => {
    expect(compareReaders(readFileSync(join(root, file), 'utf8'))).toBe('same');
  });

  it.each(fixtureFiles)('reads the invalid policy %s to the same values, or declines', (file) => {
    compareReaders(readFileSync(join(root, file), 'utf8'));
  });

  it('gives the same values and records as the AST reader for generated documents, or declines', () => {
    const outcomes = { same: 0, declined: 0 };
    const numRuns = 1500;
    fc.assert(
      fc.property(yamlDocument, (text) => {
        outcomes[compareReaders(text)] += 1;
      }),
      { numRuns },
    );
    // Not vacuous: many documents are malformed on purpose, but a good share is read the fast way.
    expect(outcomes.same).toBeGreaterThan(numRuns * 0.15);
  });

  it('resolves the plain scalars where js-yaml and yaml core schemas differ as yaml does', () => {
    // A lone `-` after a key is a syntax error to `yaml`; a `<<` value makes the fast reader decline.
    const edges = NUMERIC_EDGES.filter((edge) => edge !== '-' && edge !== '<<');
    const text = `${edges.map((edge, index) => `k${index}: ${edge}`).join('\n')}\n`;
    expect(compareReaders(text)).toBe('same');
    const value = readYamlFast(text, ENV, LIMITS)?.value as Record<string, unknown>;
    const of = (edge: string) => value[`k${edges.indexOf(edge)}`];
    expect([of('0b101'), of('+0x10'), of('-0o7'), of('1_000'), of('012')]).toEqual([
      '0b101',
      '+0x10',
      '-0o7',
      '1_000',
      12,
    ]);
    expect([of('+.5'), of('0x1F'), of('0o17'), of('1e3'), of('-.Inf')]).toEqual([
      0.5,
      31,
      15,
      1000,
      -Infinity,
    ]);
    expect(Object.is(of('-0'), -0)).toBe(true);
    expect(of('.NaN')).toBeNaN();
    expect([of('True'), of('tRue'), of('yes'), of('Null'), of('nUll'), of('~')]).toEqual([
      true,
      'tRue',
      'yes',
      null,
      'nUll',
      null,
    ]);
  });

  it('reads numeric keys as the strings of their values, as the AST reader does', () => {
    expect(compareReaders('0x10: a\n1.0: b\n-0: c\n1e3: d\ntrue: e\n')).toBe('same');
    expect(Object.keys(readYamlFast('0x10: a\n1.0: b\n', ENV, LIMITS)?.value as object)).toEqual(['1', '16']);
  });

  it('applies merge keys as the AST reader does: own keys win wherever << stands, earlier merges win', () => {
    const text = [
      'base: &base { retry: 1, timeout: 2 }',
      'more: &more { timeout: 3, notify: x, <<: { deep: 4 } }',
      'job: { name: a, <<: [*base, *more], retry: 9, "<<": quoted }',
      '',
    ].join('\n');
    expect(compareReaders(text)).toBe('same');
    const value = readYamlFast(text, ENV, LIMITS)?.value as Record<string, Record<string, unknown>>;
    // A merged map's own `<<` is not followed (`deep` stays out), as in the AST walk.
    const job = Object.assign(Object.create(null), {
      name: 'a',
      retry: 9,
      '<<': 'quoted',
      timeout: 2,
      notify: 'x',
    });
    expect(isDeepStrictEqual(value.job, job)).toBe(true);
    expect(Object.keys(value.job ?? {})).toEqual(['name', 'retry', '<<', 'timeout', 'notify']);
  });

  it('copies aliased values and records their ${VAR}s at every place they appear', () => {
    const text = 'a: &x { url: "${A}", list: [1] }\nb: *x\nc: { <<: *x }\n';
    expect(compareReaders(text)).toBe('same');
    const read = readYamlFast(text, ENV, LIMITS);
    const value = read?.value as Record<string, Record<string, unknown>>;
    expect(value.a?.list).not.toBe(value.b?.list);
    expect([...(read?.interpolated.keys() ?? [])]).toEqual(['a\u0000url', 'b\u0000url', 'c\u0000url']);
  });

  it('keeps the order of ${VAR} records where keys like "2" would reorder them, by declining', () => {
    expect(compareReaders('with: { 1: "${A}" }\nlist: { 2: x, b: y }\n')).toBe('same');
    expect(readYamlFast('with: { b: "${A}", 2: "${A}" }\n', ENV, LIMITS)).toBeUndefined();
  });

  it.each([
    ['a duplicate key', 'a: 1\nb: 2\na: 3\n'],
    ['a syntax error', 'a: [1, 2\nb: 3\n'],
    ['an unset variable', 'a: "${NOPE}"\n'],
    ['an unknown anchor', 'a: *nowhere\n'],
    ['a null key', '~: a\n'],
    ['an alias as a key', 'a: &k key\n*k : b\n'],
    ['a list as a key', '? [a, b]\n: c\n'],
    ['a merge of a scalar', 'a: { <<: 1 }\n'],
    ['a plain << as a value, a symbol to the AST walk if it is an alias', 'a: { &k <<: { x: 1 } }\nb: *k\n'],
    ['an explicit tag', 'a: !!str 1\n'],
    ['a directive', '%YAML 1.1\n---\na: yes\n'],
    ['a directive after a byte order mark', '\ufeff%YAML 1.1\n---\na: yes\n'],
    ['a tab', 'a:\tb\n'],
    ['a comment glued to a quoted scalar', 'a: "b"#c\n'],
    ['an anchor given twice', 'a: &x 1\nb: &x 2\nc: *x\n'],
    ['two anchors on one empty node', 'a: &x\n  &y\n'],
    ['an anchored map on its anchor line', 'a: &x k: v\n'],
    ['a flow list indented too little', 'k:\n  a: [\n  1]\n'],
    ['an empty list entry', '- - x\n  -\n- y\n'],
    ['a block scalar with an explicit indentation', 'a: |2\n   \n'],
    ['a line over 1024 characters', `${'k'.repeat(1030)}: v\n`],
    ['a second document', 'a: 1\n---\nb: 2\n'],
  ])('declines %s, which the AST reader reports or reads differently', (_, text) => {
    expect(readYamlFast(text, ENV, LIMITS)).toBeUndefined();
  });

  it('reads a flow list closed at its key indentation, which both readers accept', () => {
    expect(compareReaders('targets:\n  dev:\n    workgroups: [\n      "a",\n      "b",\n    ]\n')).toBe(
      'same',
    );
  });
});

describe('limits, as the AST reader keeps them', () => {
  /** 99 aliases in `l`, then `l` aliased 99 times: 99 + 99 × (1 + 99) = 9,999 expansions, plus `extra`. */
  const aliases = (extra: number) =>
    [
      's: &s x',
      `l: &l [${Array(99).fill('*s').join(', ')}]`,
      `m: [${Array(99).fill('*l').join(', ')}]`,
      `extra: [${Array(extra).fill('*s').join(', ')}]`,
      '',
    ].join('\n');

  it(`counts alias expansions as the AST reader does: ${MAX_ALIAS_EXPANSIONS} are read the fast way`, () => {
    expect(compareReaders(aliases(MAX_ALIAS_EXPANSIONS - 9_999))).toBe('same');
  });

  it('falls back past the alias limit, and readYaml reports it where the AST reader does', () => {
    const text = aliases(MAX_ALIAS_EXPANSIONS - 9_999 + 1);
    expect(readYamlFast(text, ENV, LIMITS)).toBeUndefined();
    const problems = readYaml(text, 'doc.yaml', ENV).problems;
    expect(problems).toEqual(readYamlDocument(text, 'doc.yaml', ENV).problems);
    expect(problems.map((problem) => problem.message)).toEqual([
      `more than ${MAX_ALIAS_EXPANSIONS} alias expansions: aliases nested too deep`,
    ]);
  });

  it('declines an alias bomb without expanding it, and readYaml reports it', () => {
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 9; level += 1) {
      levels.push(
        `a${level}: &a${level} [${Array(10)
          .fill(`*a${level - 1}`)
          .join(', ')}]`,
      );
    }
    const text = `${levels.join('\n')}\n`;
    const started = performance.now();
    expect(readYamlFast(text, ENV, LIMITS)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(readYaml(text, 'doc.yaml', ENV).problems.map((problem) => problem.message)).toContain(
      `more than ${MAX_ALIAS_EXPANSIONS} alias expansions: aliases nested too deep`,
    );
  });

  it('falls back on deep nesting, and readYaml reports nesting past the limit as before', () => {
    const nested = (depth: number) => `${'['.repeat(depth)}x${']'.repeat(depth)}\n`;
    expect(compareReaders(nested(MAX_DEPTH / 2))).toBe('same');
    expect(readYamlFast(nested(MAX_DEPTH / 2 + 1), ENV, LIMITS)).toBeUndefined();
    expect(
      readYaml(nested(MAX_DEPTH + 1), 'doc.yaml', ENV).problems.map((problem) => problem.message),
    ).toEqual([`${'[0]'.repeat(MAX_DEPTH + 1)}: nesting deeper than ${MAX_DEPTH} levels`]);
  });
});
