import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatProblem, PolicyError, parsePolicy } from '../../../src/policy/index.js';
import { SECRET_VALUES, testEnv, testRegistry } from '../../fixtures/policies/test-registry.js';

/**
 * Each file under fixtures/policies/invalid starts with one `# expect: line:col: message` comment
 * per problem it must produce, in file order; nothing else may be reported.
 */
const directory = new URL('../../fixtures/policies/invalid/', import.meta.url);
const files = readdirSync(directory)
  .filter((name) => name.endsWith('.yaml'))
  .sort();

function expectedProblems(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('# expect: '))
    .map((line) => line.slice('# expect: '.length));
}

function reportedProblems(file: string, text: string): PolicyError | undefined {
  try {
    parsePolicy(text, file, { registry: testRegistry, env: testEnv });
    return undefined;
  } catch (error) {
    if (error instanceof PolicyError) return error;
    throw error;
  }
}

describe('invalid policy corpus', () => {
  it('holds at least 40 invalid policies', () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
  });

  it.each(files)('%s is refused with exactly its expected problems, each at its line and column', (file) => {
    const text = readFileSync(new URL(file, directory), 'utf8');
    const expected = expectedProblems(text);
    expect(expected.length).toBeGreaterThan(0);
    const error = reportedProblems(file, text);
    expect(error, `${file} was accepted`).toBeInstanceOf(PolicyError);
    expect(error?.problems.map((problem) => `${problem.line}:${problem.col}: ${problem.message}`)).toEqual(
      expected,
    );
    for (const problem of error?.problems ?? []) {
      expect(formatProblem(problem)).toBe(`${file}:${problem.line}:${problem.col}: ${problem.message}`);
    }
  });

  it('never prints a value that came from the environment, in any problem of the corpus', () => {
    for (const file of files) {
      const error = reportedProblems(file, readFileSync(new URL(file, directory), 'utf8'));
      const output = error?.message ?? '';
      for (const secret of SECRET_VALUES) expect(output).not.toContain(secret);
    }
  });
});
