// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { describe, expect, it } from 'vitest';
import { readYaml } from '../../../src/policy/yaml/index.js';

const TEXT = `version: 1
jobs:
  nightly:
    schedule: "0 20 * * 1-5"
    target: { workgroups: ["dev-*", "qa-*"] }
    skip:
      - holidays
`;

describe('positions of YAML nodes', () => {
  const source = readYaml(TEXT, 'p.yaml', {});

  it('points at the value of a key, or at the key itself', () => {
    expect(source.locate(['jobs', 'nightly', 'schedule'])).toEqual({ file: 'p.yaml', line: 4, col: 15 });
    expect(source.locate(['jobs', 'nightly', 'schedule'], 'key')).toEqual({
      file: 'p.yaml',
      line: 4,
      col: 5,
    });
  });

  it('finds nodes inside flow collections and block lists', () => {
    expect(source.locate(['jobs', 'nightly', 'target', 'workgroups', 1])).toMatchObject({ line: 5, col: 37 });
    expect(source.locate(['jobs', 'nightly', 'skip', 0])).toMatchObject({ line: 7, col: 9 });
  });

  it('falls back to the nearest node that exists', () => {
    expect(source.locate(['jobs', 'nightly', 'retry', 'attempts'])).toMatchObject({ line: 3, col: 3 });
  });

  it('reads maps into null-prototype objects, so a "__proto__" key is plain data', () => {
    const value = readYaml('__proto__: { polluted: true }\n', 'p.yaml', {}).value as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ polluted: true });
  });

  it('records where strings came from the environment, with their text as written', () => {
    const read = readYaml('a: "${TOKEN}"\nb: plain\nc: ["x", "${TOKEN:-d}"]\n', 'p.yaml', { TOKEN: 't0ken' });
    expect(read.value).toEqual({ a: 't0ken', b: 'plain', c: ['x', 't0ken'] });
    expect(read.isInterpolated(['a'])).toBe(true);
    expect(read.isInterpolated(['b'])).toBe(false);
    expect(read.templateOf(['c', 1])).toBe('${TOKEN:-d}');
    expect(read.interpolatedBelow(['c'])).toEqual([['1']]);
  });

  it('reports a syntax error at its own position and gives no value', () => {
    const read = readYaml('a: [1, 2\nb: 3\n', 'p.yaml', {});
    expect(read.value).toBeUndefined();
    expect(read.problems).toHaveLength(1);
    expect(read.problems[0]?.message).toMatch(/^invalid YAML: /);
  });

  it('finds duplicate keys in a 20,000-key map in linear time', () => {
    const keys = Array.from({ length: 20_000 }, (_, index) => `k${index}: ${index}`);
    const started = performance.now();
    const read = readYaml(`${keys.join('\n')}\nk5: again\n`, 'p.yaml', {});
    expect(read.problems).toEqual([
      { file: 'p.yaml', line: 20_001, col: 1, message: 'duplicate key "k5" (first defined on line 6)' },
    ]);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
