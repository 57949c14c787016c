import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkPolicy,
  formatProblem,
  type PolicyEnv,
  PolicyError,
  parsePolicy,
} from '../../../src/policy/index.js';
import { SECRET_VALUES, testEnv, testRegistry } from '../../fixtures/policies/test-registry.js';

/**
 * Each file under fixtures/policies/warnings is a valid policy that starts with one
 * `# expect: line:col: warning: message` comment per warning it must produce, in file order;
 * nothing else may be reported. It is checked as `nightshift validate` checks it: an unset
 * variable is a warning, and calendars are judged at NOW.
 */
const directory = new URL('../../fixtures/policies/warnings/', import.meta.url);
const files = readdirSync(directory)
  .filter((name) => name.endsWith('.yaml'))
  .sort();
const NOW = new Date('2026-03-27T06:00:00Z');
/** Zones from the environment, written in lower case: a secret one's spelling must not reach a message. */
const env: PolicyEnv = { ...testEnv, LOWER_ZONE: 'asia/tokyo', ZONE_SECRET: 'europe/paris' };

function read(file: string): string {
  return readFileSync(new URL(file, directory), 'utf8');
}

function check(file: string) {
  return checkPolicy(read(file), file, { registry: testRegistry, env, now: NOW, unsetVariables: 'warning' });
}

describe('warning corpus', () => {
  it.each(files)('%s is valid, with exactly its expected warnings, each at its line and column', (file) => {
    const expected = read(file)
      .split('\n')
      .filter((line) => line.startsWith('# expect: '))
      .map((line) => `${file}:${line.slice('# expect: '.length)}`);
    expect(expected.length).toBeGreaterThan(0);
    const { problems, policy } = check(file);
    expect(problems.map(formatProblem)).toEqual(expected);
    expect(problems.every((problem) => problem.severity === 'warning')).toBe(true);
    expect(policy, `${file}: its jobs could not be resolved`).toBeDefined();
  });

  it('never prints a secret value, in any warning of the corpus', () => {
    for (const file of files) {
      const output = check(file).problems.map(formatProblem).join('\n');
      for (const secret of [...SECRET_VALUES, 'europe/paris', 'Europe/Paris'])
        expect(output).not.toContain(secret);
    }
  });

  it('gives a policy its warnings when it loads, and the loaded policy the zone’s IANA spelling', () => {
    const policy = parsePolicy(read('03-timezone-lowercase.yaml'), 'tz.yaml', {
      registry: testRegistry,
      env,
      now: NOW,
    });
    expect(policy.warnings.map((warning) => warning.line)).toEqual([7, 15, 19, 23]);
    expect(policy.defaults.timezone).toBe('Europe/Berlin');
    expect(Object.fromEntries(policy.jobs.map((job) => [job.name, job.timezone]))).toEqual({
      berlin: 'Europe/Berlin',
      'new-york': 'America/New_York',
      'from-env': 'Asia/Tokyo',
      'from-secret': 'Europe/Paris',
      // an alias spelt as IANA spells it is kept, not replaced by ICU's older name (Asia/Calcutta)
      kolkata: 'Asia/Kolkata',
    });
  });

  it('reads a US time name that follows one place’s rules (HST, EST5EDT) as that place’s zone', () => {
    const policy = parsePolicy(read('06-timezone-us-time-names.yaml'), 'us.yaml', {
      registry: testRegistry,
      env,
    });
    expect(Object.fromEntries(policy.jobs.map((job) => [job.name, job.timezone]))).toEqual({
      honolulu: 'Pacific/Honolulu',
      'new-york': 'America/New_York',
      'los-angeles': 'America/Los_Angeles',
      // UTC by another name is UTC: kept as written
      utc: 'Etc/GMT+0',
    });
  });

  it('refuses an unset variable when the policy is loaded to run, naming the variable (start, run, plan)', () => {
    const load = () =>
      parsePolicy(read('05-unset-env-variables.yaml'), 'unset.yaml', { registry: testRegistry, env });
    expect(load).toThrow(PolicyError);
    try {
      load();
    } catch (error) {
      expect((error as PolicyError).problems.map((problem) => `${problem.line}:${problem.col}`)).toEqual([
        '8:10',
        '17:57',
      ]);
    }
  });
});
