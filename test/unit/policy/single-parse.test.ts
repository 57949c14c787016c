import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';

/** Counts the `yaml` package's parses: a plain policy needs none, any other one. */
const parses = vi.hoisted(() => ({ count: 0 }));

vi.mock('../../../src/policy/yaml/package.js', async (importOriginal) => {
  const { yaml } = await importOriginal<typeof import('../../../src/policy/yaml/package.js')>();
  return {
    yaml: {
      ...yaml,
      parseDocument: (...args: Parameters<typeof yaml.parseDocument>) => {
        parses.count += 1;
        return yaml.parseDocument(...args);
      },
    },
  };
});

// Loaded afresh, so it reads the counting `yaml` even when an earlier file in this worker
// (unit files share their modules) loaded the policy code with the real one.
vi.resetModules();
const { PolicyError, parsePolicy } = await import('../../../src/policy/index.js');

const POLICY = readFileSync(new URL('../../../config/policy.yaml', import.meta.url), 'utf8');
const options = { registry: actionRegistry, env: { OPS_WEBHOOK: 'https://hooks.example.com/ops' } };

describe('one reading gives values and positions', () => {
  beforeEach(() => {
    parses.count = 0;
  });

  it('validates a plain policy and places its jobs and their keys without parsing it with the yaml package', () => {
    const policy = parsePolicy(POLICY, 'policy.yaml', options);
    const [first, second] = policy.jobs;
    const line = POLICY.split('\n').indexOf(`  ${first?.name}:`) + 1;
    expect(first?.location).toEqual({ file: 'policy.yaml', line, col: 3 });
    expect(second?.location.line).toBeGreaterThan(line);
    expect(policy.locate(['jobs', first?.name ?? '', 'schedule']).line).toBeGreaterThan(line);
    expect(parses.count).toBe(0);
  });

  it('reads a loaded policy in other YAML again, once, when a later check asks where something is', () => {
    const anchored = POLICY.replace('timezone: Europe/Berlin', 'timezone: &zone Europe/Berlin');
    const policy = parsePolicy(anchored, 'policy.yaml', options);
    const [first] = policy.jobs;
    const line = anchored.split('\n').indexOf(`  ${first?.name}:`) + 1;
    expect(parses.count).toBe(1);
    expect(policy.locate(['jobs', first?.name ?? '', 'schedule']).line).toBeGreaterThan(line);
    expect(policy.locate(['jobs', first?.name ?? '', 'action']).line).toBeGreaterThan(line);
    expect(parses.count).toBe(2);
  });

  it('keeps a job location an own enumerable property, so copies carry it', () => {
    const [job] = parsePolicy(POLICY, 'policy.yaml', options).jobs;
    expect(Object.keys(job ?? {})).toContain('location');
    expect({ ...job }.location).toEqual(job?.location);
  });

  it('places the problems of an invalid plain policy without the yaml package', () => {
    const invalid = POLICY.replace('timezone: Europe/Berlin', 'timezone: Europe/Berlni');
    expect(invalid).not.toBe(POLICY);
    const line = invalid.split('\n').findIndex((text) => text.includes('Europe/Berlni')) + 1;
    expect(() => parsePolicy(invalid, 'policy.yaml', options)).toThrow(PolicyError);
    try {
      parsePolicy(invalid, 'policy.yaml', options);
    } catch (error) {
      expect((error as InstanceType<typeof PolicyError>).problems[0]).toMatchObject({ line });
    }
    expect(parses.count).toBe(0);
  });

  it('validates a policy in other YAML (an anchor) with one parse of the yaml package, for values and positions', () => {
    const anchored = POLICY.replace('timezone: Europe/Berlin', 'timezone: &zone Europe/Berlin tz');
    expect(anchored).not.toBe(POLICY);
    expect(() => parsePolicy(anchored, 'policy.yaml', options)).toThrow(/Europe\/Berlin tz/);
    expect(parses.count).toBe(1);
  });
});
