import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { POLICY_SCHEMA_PATH, policyJsonSchema } from '../../../src/policy/index.js';
import { testRegistry } from '../../fixtures/policies/test-registry.js';

const root = new URL('../../../', import.meta.url);

type JsonObject = Record<string, unknown>;
const object = (value: unknown) => value as JsonObject;

describe('policy JSON Schema', () => {
  it(`is committed up to date at ${POLICY_SCHEMA_PATH} (regenerate: nightshift schema > ${POLICY_SCHEMA_PATH})`, () => {
    const committed = JSON.parse(readFileSync(new URL(POLICY_SCHEMA_PATH, root), 'utf8'));
    expect(committed).toEqual(policyJsonSchema(actionRegistry));
  });

  it('requires version and jobs or windows, and refuses unknown top-level keys', () => {
    const schema = policyJsonSchema(actionRegistry);
    expect(schema.required).toEqual(['version']);
    expect(schema.anyOf).toEqual([{ required: ['jobs'] }, { required: ['windows'] }]);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
  });

  it('gives each action its own job branch, so with: completes that action’s parameters', () => {
    const jobs = object(object(policyJsonSchema(testRegistry).properties).jobs);
    const branches = object(jobs.additionalProperties).oneOf as JsonObject[];
    const byAction = new Map(
      branches.map((branch) => [object(object(branch.properties).action).const, branch]),
    );
    expect([...byAction.keys()]).toEqual([...testRegistry.keys()].sort());
    const drillWith = object(object(byAction.get('drill')?.properties).with);
    expect(drillWith.required).toEqual(['workgroup', 'workspace', 'backupId']);
    expect(drillWith.additionalProperties).toBe(false);
    expect(byAction.get('drill')?.required).toEqual(['schedule', 'action', 'with']);
  });

  it('describes durations as written, with their pattern and default', () => {
    const defaults = object(object(policyJsonSchema(actionRegistry).properties).defaults);
    const timeout = object(object(defaults.properties).timeout);
    expect(timeout).toMatchObject({ type: 'string', default: '30m' });
    expect(new RegExp(String(timeout.pattern)).test('1h30m')).toBe(true);
    expect(new RegExp(String(timeout.pattern)).test('30 minutes')).toBe(false);
  });
});
