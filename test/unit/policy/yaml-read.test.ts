// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as yamlMain from 'yaml';
import { aliasPastLimit } from '../../../src/policy/yaml/alias-limit.js';
import { MAX_ALIAS_VALUES, MAX_ALIASES, MAX_DEPTH, readYaml } from '../../../src/policy/yaml/index.js';
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
  const problemsOf = (text: string) =>
    readYaml(text, 'doc.yaml', ENV).problems.map(({ line, col, message }) => `${line}:${col}: ${message}`);
  const pastBudget = (alias: string, size: number) =>
    `alias "*${alias}" copies ${size} values, past the ${MAX_ALIAS_VALUES} that aliases may add to a policy (an alias bomb?)`;

  it(`reads aliases that copy ${MAX_ALIAS_VALUES} values, and refuses the alias or merge that would copy more`, () => {
    // `l` is 999 scalars (1,000 values with itself), copied 500 times: 500,000 values
    const copies = (extra: string) =>
      [
        's: &s x',
        'm: &m { a: 1 }',
        `l: &l [${Array(999).fill('x').join(', ')}]`,
        `c: [${Array(500).fill('*l').join(', ')}]`,
        extra,
        '',
      ].join('\n');
    expect(problemsOf(copies(''))).toEqual([]);
    expect(problemsOf(copies('extra: [*s]'))).toEqual([`5:9: extra[0]: ${pastBudget('s', 1)}`]);
    expect(problemsOf(copies('extra: { <<: *m }'))).toEqual([`5:14: extra: ${pastBudget('m', 3)}`]);
  });

  it('weighs an alias by everything it copies, the aliases inside it included, and copies nothing past the budget', () => {
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 9; level += 1) {
      levels.push(
        `a${level}: &a${level} [${Array(10)
          .fill(`*a${level - 1}`)
          .join(', ')}]`,
      );
    }
    const started = performance.now();
    const read = readYaml(`${levels.join('\n')}\n`, 'doc.yaml', ENV);
    // a1 to a4 copy 123,440 values in place; a5's fourth alias of a4 (111,111 values) would cross
    expect(read.problems.map(({ line, col, message }) => `${line}:${col}: ${message}`)).toEqual([
      `6:25: a5[3]: ${pastBudget('a4', 111_111)}`,
    ]);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect((read.value as Record<string, unknown[]>).a8).toEqual(Array(10).fill(null));
  });

  it(`refuses a text of more than ${MAX_ALIASES} aliases without parsing it, at the alias past them`, () => {
    const aliases = (count: number) => `s: &s x\nl: [${Array(count).fill('*s').join(', ')}]\n`;
    expect(problemsOf(aliases(MAX_ALIASES + 1))).toEqual([
      `2:${5 + 4 * MAX_ALIASES}: more than ${MAX_ALIASES} aliases: refused unread, as an alias bomb`,
    ]);
    // one "*" more that could start an alias has the text lexed: it holds no more than the limit
    expect(aliasPastLimit(`${aliases(MAX_ALIASES)}q: " *x"\n`)).toBeUndefined();
    expect(aliasPastLimit(`${aliases(MAX_ALIASES)}q: [ *s ]\n`)).toBe(17 + 4 * MAX_ALIASES);
  });

  it('does not take a "*" in a quoted or block scalar for an alias', () => {
    const lines = Array(MAX_ALIASES + 1).fill('  *x');
    const read = readYaml(`block: |\n${lines.join('\n')}\nquoted: "${lines.join(' ')}"\n`, 'doc.yaml', ENV);
    expect(read.problems).toEqual([]);
    expect((read.value as Record<string, string>).block?.startsWith('*x\n*x\n')).toBe(true);
  });

  it(`reads ${MAX_DEPTH} levels of nesting, and refuses one more`, () => {
    const nested = (depth: number) => `${'['.repeat(depth)}x${']'.repeat(depth)}\n`;
    expect(messagesOf(nested(MAX_DEPTH))).toEqual([]);
    expect(messagesOf(nested(MAX_DEPTH + 1))).toEqual([
      `${'[0]'.repeat(MAX_DEPTH + 1)}: nesting deeper than ${MAX_DEPTH} levels`,
    ]);
  });
});
