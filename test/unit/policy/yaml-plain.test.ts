// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { readYaml } from '../../../src/policy/yaml/index.js';
import { readPlainYaml } from '../../../src/policy/yaml/plain.js';
import { parseYaml } from '../../../src/policy/yaml/read.js';

/**
 * The plain reader (src/policy/yaml/plain.ts) gives up on anything it does not read exactly as
 * the `yaml` package does. Whatever it reads must be what the `yaml` package reads: the same
 * values, the same interpolated strings, and no problem.
 */

const ENV = {
  A: 'from-a',
  OPS_WEBHOOK: 'https://hooks.example.com/ops',
  SECURITY_WEBHOOK: 'https://hooks.example.com/security',
  DRILL_BACKUP_ID: 'bk-1',
  DEMO_BACKUP_ID: 'bk-2',
  DEMO_UPTIME: 'Mon-Sun 00:01-00:02',
};
const ALLOW = new Set<string>();

function both(text: string) {
  const plain = readPlainYaml(text, ENV, ALLOW);
  const full = parseYaml(text, 'doc.yaml', ENV);
  return { plain, full };
}

/** When the plain reader reads `text`, it reads what the `yaml` package reads. Returns whether it read it. */
function agrees(text: string): boolean {
  const { plain, full } = both(text);
  if (!plain) return false;
  expect(full.problems, text).toEqual([]);
  expect(plain.value, text).toStrictEqual(full.value);
  const templates = (source: ReturnType<typeof readPlainYaml>) =>
    [...(source?.interpolated ?? new Map())].map(([key, { template, reads }]) => [key, template, reads]);
  const fullTemplates = full
    .interpolatedBelow([])
    .map((path) => [path.join('\u0000'), full.templateOf(path), full.readsAt(path)]);
  expect(templates(plain).sort(), text).toEqual(fullTemplates.sort());
  // it places every node (and a path going further than the file) where the yaml package does
  const source = readYaml(text, 'doc.yaml', ENV);
  for (const path of [...pathsOf(plain.value), ['nope'], ['nope', 'deeper']]) {
    for (const anchor of ['key', 'value'] as const) {
      const where = (located: { line: number; col: number }) => ({ path, anchor, ...located });
      expect(where(source.locate(path, anchor)), text).toEqual(where(full.locate(path, anchor)));
    }
  }
  return true;
}

/** Every path of a value, and one going further than each map and list. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [prefix];
  const children = Array.isArray(value)
    ? value.map((item, index) => pathsOf(item, [...prefix, index]))
    : Object.entries(value).map(([key, item]) => pathsOf(item, [...prefix, key]));
  return [prefix, [...prefix, 'missing'], ...children.flat()];
}

const root = new URL('../../../', import.meta.url).pathname;

function yamlFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return name.endsWith('.yaml') ? [path] : [];
  });
}

/** The ```yaml blocks of the docs and README. */
function documentedPolicies(): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).map((name) => join('docs', name))]
    .filter((file) => file.endsWith('.md'))
    .flatMap((file) => [...readFileSync(join(root, file), 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)])
    .map((match) => match[1] as string);
}

describe('the plain reader reads what the yaml package reads', () => {
  const files = [...yamlFiles(join(root, 'config')), ...yamlFiles(join(root, 'test/fixtures/policies'))];

  it.each(files.map((file) => [file.slice(root.length), file]))('%s', (_, file) => {
    agrees(readFileSync(file, 'utf8'));
  });

  it('reads every example policy of the repository (so a valid policy is not parsed twice)', () => {
    const examples = yamlFiles(join(root, 'config'));
    expect(examples.length).toBeGreaterThan(4);
    expect(examples.filter((file) => !agrees(readFileSync(file, 'utf8')))).toEqual([]);
  });

  it('agrees on every documented policy and every action’s example', () => {
    const texts = [...documentedPolicies(), ...[...actionRegistry.values()].map((action) => action.example)];
    expect(texts.length).toBeGreaterThan(30);
    const read = texts.filter(agrees).length;
    // most are plain YAML: the rest (anchors, block scalars) go to the yaml package
    expect(read).toBeGreaterThan(texts.length / 2);
  });

  it.each([
    ['an anchor and an alias', 'a: &x 1\nb: *x\n'],
    ['a merge key', 'base: { a: 1 }\njob:\n  <<: { a: 2 }\n'],
    ['a tag', 'a: !!str 1\n'],
    ['a block scalar', 'a: |\n  text\n'],
    ['a folded plain scalar', 'a: one\n  two\n'],
    ['a flow list over two lines', 'a: [1,\n  2]\n'],
    ['a tab', 'a:\t1\n'],
    ['a carriage return', 'a: 1\r\n'],
    ['a document marker', '---\na: 1\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['an unset variable', 'a: "${UNSET_VARIABLE}"\n'],
    ['a null key', '~: 1\n'],
    ['a key without a space after its colon', 'a:1\n'],
    ['a value that is a map on the same line', 'a: b: c\n'],
    ['an empty file', '# nothing\n'],
    ['an explicit key', '? a\n: 1\n'],
    ['a JSON-style flow map', 'a: {"b":1}\n'],
  ])('gives %s to the yaml package', (_, text) => {
    expect(readPlainYaml(text, ENV, ALLOW)).toBeUndefined();
  });

  it('reads quoted scalars, escapes, comments and flow collections as the yaml package does', () => {
    const text = `version: 1 # a comment
"quoted key": 'it''s'
escapes: "tab\\there, \\u00e9, \\x41, \\"q\\""
list: [a, "b c", 'd', {e: 1, f: [2, 3]}, ]
empty: {}
none: []
nothing:
numbers: [0x1F, 0o17, 1e3, -.inf, 012, +5, 1_000]
words: [yes, no, on, True, NULL, ~]
url: http://example.com/a#b
hash: a #comment
jobs:
- name: a
  with:
    x: "\${A}"
  tags:
  - t1
  -   t2
- b
`;
    expect(agrees(text)).toBe(true);
  });
});

/** A random document: maps and lists of tricky scalars, written in random styles. */
const scalarText = fc.constantFrom(
  'plain',
  'two words',
  'a#b',
  'a #b',
  '-1',
  '- x',
  '0x1F',
  '1e3',
  'true',
  'Null',
  '~',
  '',
  'http://x:80/y',
  'a: b',
  'x:',
  '${A}',
  '${A:-d}',
  '$${A}',
  '${UNSET}',
  'dev-*',
  '*',
  '&a',
  '!t',
  '[x]',
  "it's",
  'say "hi"',
  '\\',
  'é',
  ' lead',
  'trail ',
  '@x',
  '%x',
  '?x',
  'a,b',
  '{a}',
);
const keyText = fc.constantFrom(
  'a',
  'b-c',
  '1',
  'true',
  'on',
  'x y',
  'a: b',
  '#',
  'k#',
  '~',
  '<<',
  'é',
  '"q"',
);

function quote(text: string, style: number): string {
  if (style === 0) return text;
  if (style === 1) return `'${text.replaceAll("'", "''")}'`;
  return JSON.stringify(text);
}

type Tree = string | Tree[] | [string, Tree][];
const tree: fc.Arbitrary<{ tree: Tree; kind: 'scalar' | 'list' | 'map' }> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarText.map((text) => ({ tree: text as Tree, kind: 'scalar' as const })),
    fc
      .array(tie('node') as fc.Arbitrary<{ tree: Tree }>, { maxLength: 3 })
      .map((items) => ({ tree: items.map((item) => item.tree) as Tree, kind: 'list' as const })),
    fc
      .array(fc.tuple(keyText, tie('node') as fc.Arbitrary<{ tree: Tree }>), { maxLength: 3 })
      .map((entries) => ({
        tree: entries.map(([key, value]) => [key, value.tree]) as Tree,
        kind: 'map' as const,
      })),
  ),
})).node as fc.Arbitrary<{ tree: Tree; kind: 'scalar' | 'list' | 'map' }>;

function isMapTree(node: Tree): node is [string, Tree][] {
  return (
    Array.isArray(node) &&
    node.every((entry) => Array.isArray(entry) && typeof entry[0] === 'string' && entry.length === 2)
  );
}

/** Writes a tree in YAML, each choice of style drawn from `choices` (the same draws give the same text). */
function write(node: Tree, indent: number, choices: () => number, flow: boolean): string {
  if (typeof node === 'string') return quote(node, choices() % 3);
  const inFlow = flow || choices() % 3 === 0;
  if (inFlow) {
    if (isMapTree(node) && node.length > 0 && choices() % 4 !== 0)
      return `{${node.map(([key, value]) => `${quote(key, choices() % 3)}: ${write(value, 0, choices, true)}`).join(', ')}}`;
    return `[${(node as Tree[]).map((item) => write(item, 0, choices, true)).join(', ')}]`;
  }
  const pad = ' '.repeat(indent);
  const comment = () => (choices() % 5 === 0 ? ' # c' : '');
  if (isMapTree(node) && node.length > 0)
    return node
      .map(([key, value]) => {
        const head = `${pad}${quote(key, choices() % 3)}:`;
        if (typeof value === 'string' || choices() % 4 === 0)
          return `${head} ${write(value, 0, choices, true)}${comment()}\n`;
        const deeper = indent + 2 + (choices() % 2) * 2;
        return `${head}${comment()}\n${write(value, deeper, choices, false)}`;
      })
      .join('');
  if ((node as Tree[]).length === 0) return `${pad}[]\n`;
  return (node as Tree[])
    .map((item) => {
      if (typeof item === 'string') return `${pad}- ${write(item, 0, choices, true)}${comment()}\n`;
      if (isMapTree(item) && item.length > 0 && choices() % 2 === 0) {
        // a block map starting on the item's line, its other entries under its first
        const spaces = 1 + (choices() % 3);
        const block = write(item, indent + 1 + spaces, choices, false);
        return `${pad}-${' '.repeat(spaces)}${block.slice(indent + 1 + spaces)}`;
      }
      return `${pad}- ${write(item, 0, choices, true)}\n`;
    })
    .join('');
}

describe('on generated documents', () => {
  it('reads nothing differently from the yaml package', () => {
    let read = 0;
    fc.assert(
      fc.property(tree, fc.array(fc.nat(), { minLength: 64, maxLength: 64 }), ({ tree: node }, draws) => {
        let next = 0;
        const choices = () => draws[next++ % draws.length] as number;
        const text = `root:\n${write(node, 2, choices, false)}`;
        if (agrees(text)) read += 1;
      }),
      { numRuns: 1500 },
    );
    // enough of them are plain YAML for the comparison to mean something
    expect(read).toBeGreaterThan(150);
  });

  it('reads the benchmark’s generated policies', async () => {
    const { generatePolicy } = await import('../../../bench/harness/generated-policy.js');
    for (const minimal of [false, true]) {
      const text = generatePolicy(200, minimal);
      expect(agrees(text)).toBe(true);
      expect(readYaml(text, 'bench.yaml', ENV).value).toStrictEqual(parseYaml(text, 'bench.yaml', ENV).value);
    }
  });
});
