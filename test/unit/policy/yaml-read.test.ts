// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as yamlMain from 'yaml';
import { MAX_ALIAS_EXPANSIONS, MAX_DEPTH, readYaml } from '../../../src/policy/yaml/index.js';
import { yaml } from '../../../src/policy/yaml/package.js';

const ENV = { A: 'from-a' };

function readValue(text: string): Record<string, unknown> {
  const read = readYaml(text, 'doc.yaml', ENV);
  expect(read.problems).toEqual([]);
  return read.value as Record<string, unknown>;
}

function messagesOf(text: string): string[] {
  return readYaml(text, 'doc.yaml', ENV).problems.map((problem) => problem.message);
}

describe('the yaml package', () => {
  it('is loaded as its ES build, with the API of its main export', () => {
    // Loaded as CommonJS, the main export also has `default` and `module.exports`.
    const names = (module: object) =>
      Object.keys(module).filter((name) => /^[A-Za-z]+$/.test(name) && name !== 'default');
    expect(names(yaml).sort()).toEqual(names(yamlMain).sort());
    expect(yaml.parseDocument).not.toBe(yamlMain.parseDocument);
    expect(yaml.parse('a: [1, yes, ~]\n')).toEqual(yamlMain.parse('a: [1, yes, ~]\n'));
  });
});

describe('plain scalars, read as YAML 1.2 core', () => {
  const edges = ['0b101', '+0x10', '-0o7', '1_000', '012', '+.5', '0x1F', '0o17', '1e3', '-.Inf', '-0'];
  const words = ['.NaN', 'True', 'tRue', 'yes', 'Null', 'nUll', '~'];
  const value = readValue(`${[...edges, ...words].map((edge, index) => `k${index}: ${edge}`).join('\n')}\n`);
  const of = (edge: string) => value[`k${[...edges, ...words].indexOf(edge)}`];

  it('reads numbers only in the forms YAML 1.2 core knows', () => {
    expect(edges.slice(0, 10).map(of)).toEqual([
      '0b101',
      '+0x10',
      '-0o7',
      '1_000',
      12,
      0.5,
      31,
      15,
      1000,
      -Infinity,
    ]);
    expect(Object.is(of('-0'), -0)).toBe(true);
    expect(of('.NaN')).toBeNaN();
  });

  it('reads booleans and nulls only in their three spellings', () => {
    expect(['True', 'tRue', 'yes', 'Null', 'nUll', '~'].map(of)).toEqual([
      true,
      'tRue',
      'yes',
      null,
      'nUll',
      null,
    ]);
  });

  it('reads numeric keys as the strings of their values', () => {
    expect(Object.keys(readValue('0x10: a\n1.0: b\n'))).toEqual(['1', '16']);
  });
});

describe('anchors, aliases and merge keys', () => {
  it('applies merge keys: own keys win wherever << stands, earlier merges win, a merged map’s own << is not followed', () => {
    const value = readValue(
      [
        'base: &base { retry: 1, timeout: 2 }',
        'more: &more { timeout: 3, notify: x, <<: { deep: 4 } }',
        'job: { name: a, <<: [*base, *more], retry: 9, "<<": quoted }',
        '',
      ].join('\n'),
    );
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
    const read = readYaml('a: &x { url: "${A}", list: [1] }\nb: *x\nc: { <<: *x }\n', 'doc.yaml', ENV);
    const value = read.value as Record<string, Record<string, unknown>>;
    expect(value.b?.url).toBe('from-a');
    expect(value.a?.list).not.toBe(value.b?.list);
    expect(read.interpolatedBelow([])).toEqual([
      ['a', 'url'],
      ['b', 'url'],
      ['c', 'url'],
    ]);
  });

  it.each([
    ['an unknown anchor', 'a: *nowhere\n', 'a: unknown anchor "*nowhere"'],
    ['a null key', '~: a\n', 'a key must be a plain string'],
    ['a list as a key', '? [a, b]\n: c\n', 'a key must be a plain string'],
    ['a merge of a scalar', 'a: { <<: 1 }\n', 'a: a "<<" merge takes a map or a list of maps'],
  ])('refuses %s', (_, text, message) => {
    expect(messagesOf(text)).toEqual([message]);
  });
});

describe('limits', () => {
  /** 99 aliases in `l`, then `l` aliased 99 times: 99 + 99 × (1 + 99) = 9,999 expansions, plus `extra`. */
  const aliases = (extra: number) =>
    [
      's: &s x',
      `l: &l [${Array(99).fill('*s').join(', ')}]`,
      `m: [${Array(99).fill('*l').join(', ')}]`,
      `extra: [${Array(extra).fill('*s').join(', ')}]`,
      '',
    ].join('\n');

  it(`reads ${MAX_ALIAS_EXPANSIONS} alias expansions, and refuses one more`, () => {
    expect(messagesOf(aliases(MAX_ALIAS_EXPANSIONS - 9_999))).toEqual([]);
    expect(messagesOf(aliases(MAX_ALIAS_EXPANSIONS - 9_999 + 1))).toEqual([
      `more than ${MAX_ALIAS_EXPANSIONS} alias expansions: aliases nested too deep`,
    ]);
  });

  it('refuses an alias bomb without expanding it', () => {
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 9; level += 1) {
      levels.push(
        `a${level}: &a${level} [${Array(10)
          .fill(`*a${level - 1}`)
          .join(', ')}]`,
      );
    }
    const started = performance.now();
    expect(messagesOf(`${levels.join('\n')}\n`)).toContain(
      `more than ${MAX_ALIAS_EXPANSIONS} alias expansions: aliases nested too deep`,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it(`reads ${MAX_DEPTH} levels of nesting, and refuses one more`, () => {
    const nested = (depth: number) => `${'['.repeat(depth)}x${']'.repeat(depth)}\n`;
    expect(messagesOf(nested(MAX_DEPTH))).toEqual([]);
    expect(messagesOf(nested(MAX_DEPTH + 1))).toEqual([
      `${'[0]'.repeat(MAX_DEPTH + 1)}: nesting deeper than ${MAX_DEPTH} levels`,
    ]);
  });
});
