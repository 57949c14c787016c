import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { actionRegistry } from '../../../jobs/index.js';
import { createActionRegistry, parsePolicy } from '../../../src/policy/index.js';

const specs = [...actionRegistry.values()];
const reference = readFileSync(new URL('../../../docs/policy.md', import.meta.url), 'utf8');

describe('registered actions', () => {
  it('are pause and resume for now', () => {
    expect([...actionRegistry.keys()].sort()).toEqual(['pause', 'resume']);
  });

  it.each(specs)('$name has a strict params schema: an unknown parameter is refused', (spec) => {
    expect(spec.params).toBeInstanceOf(z.ZodObject);
    const result = spec.params.safeParse({ notAParameter: true });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.code).toBe('unrecognized_keys');
  });

  it.each(specs)('$name has an example policy that validates and uses it', (spec) => {
    const policy = parsePolicy(spec.example, `${spec.name} example`, { registry: actionRegistry, env: {} });
    expect(policy.jobs.some((job) => job.action === spec.name)).toBe(true);
  });

  it.each(specs)('$name is documented in docs/policy.md', (spec) => {
    expect(reference).toContain(`\`${spec.name}\``);
  });

  it('refuses two actions with one name', () => {
    const [first] = specs;
    if (!first) throw new Error('no actions');
    expect(() => createActionRegistry([first, first])).toThrow(`action "${first.name}" is registered twice`);
  });
});

describe('module boundaries', () => {
  it('src/policy never imports jobs/, so the action modules can import the policy layer without a cycle', () => {
    const directory = new URL('../../../src/policy/', import.meta.url);
    for (const file of readdirSync(directory)) {
      const text = readFileSync(new URL(file, directory), 'utf8');
      expect(text, file).not.toMatch(/from '(\.\.\/)+jobs\//);
    }
  });
});
