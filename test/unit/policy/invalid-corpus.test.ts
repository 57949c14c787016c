import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatProblem, PolicyError, parsePolicy, sortProblems } from '../../../src/policy/index.js';
import { SECRET_VALUES, testEnv, testRegistry } from '../../fixtures/policies/test-registry.js';

/**
 * Each file under fixtures/policies/invalid starts with one `# expect: line:col: message` comment
 * per problem it must produce (`line:col: warning: message` for a warning), in file order; nothing
 * else may be reported. Calendars are judged at NOW.
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

const NOW = new Date('2026-03-27T12:00:00Z');

function reportedProblems(file: string, text: string): PolicyError | undefined {
  try {
    parsePolicy(text, file, { registry: testRegistry, env: testEnv, now: NOW });
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
    const reported = sortProblems([...(error?.problems ?? []), ...(error?.warnings ?? [])]);
    expect(reported.map(formatProblem)).toEqual(expected.map((problem) => `${file}:${problem}`));
    expect(error?.problems.length).toBeGreaterThan(0);
  });

  it('never prints a secret value, in any problem of the corpus', () => {
    for (const file of files) {
      const error = reportedProblems(file, readFileSync(new URL(file, directory), 'utf8'));
      const output = error?.message ?? '';
      for (const secret of SECRET_VALUES) expect(output).not.toContain(secret);
    }
  });
});
