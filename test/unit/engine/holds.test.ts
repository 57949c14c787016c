import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import type { Workgroup } from '../../../src/api/index.js';
import {
  holdCoverage,
  holdPatternProblem,
  honoursHolds,
  workspacesHeldBy,
} from '../../../src/engine/index.js';
import { parsePolicy } from '../../../src/policy/index.js';

const fleet: Workgroup[] = [
  {
    workgroup_id: 'wg-a',
    name: 'dev-alpha',
    workspaces: [
      { workspace_id: 'ws-1', name: 'kg', status: 'Active' },
      { workspace_id: 'ws-2', name: 'etl', status: 'Active' },
    ],
  },
  {
    workgroup_id: 'wg-g',
    name: 'dev-gamma',
    workspaces: [
      { workspace_id: 'ws-3', name: 'kg', status: 'Active' },
      { workspace_id: 'ws-4', name: 'lineage', status: 'Active' },
    ],
  },
  {
    workgroup_id: 'wg-s',
    name: 'staging-us',
    workspaces: [{ workspace_id: 'ws-5', name: 'kg', status: 'Stopped' }],
  },
];

describe('what hold accepts', () => {
  it.each([
    ['!dev-alpha/kg', 'negated globs are not supported'],
    ['dev-alpha/!kg', 'negated globs are not supported'],
    ['dev-*/!(kg)', 'negated globs are not supported'],
    ['dev-alpha/[kg', '"[" is never closed in "[kg"'],
    ['dev-{alpha,beta/kg', '"{" is never closed in "dev-{alpha,beta"'],
  ])('refuses %j: %s', (pattern, message) => {
    expect(holdPatternProblem(pattern)).toContain(message);
  });

  it.each([
    'dev-alpha/kg',
    'dev-*/*',
    'dev-[ag]*/kg',
    'dev-{alpha,gamma}/kg',
    'wg-a/ws-1',
    'dev-alpha/\\[kg',
  ])('accepts %j', (pattern) => {
    expect(holdPatternProblem(pattern)).toBeUndefined();
  });

  it('lets release name a pattern exactly as an older version held it, negated or not', () => {
    expect(holdPatternProblem('!dev-alpha/kg', { shapeOnly: true })).toBeUndefined();
    expect(holdPatternProblem('!dev-alpha', { shapeOnly: true })).toMatch(
      /expected <workgroup>\/<workspace>/,
    );
  });
});

describe('workspacesHeldBy', () => {
  it('matches by name or id, as targets do', () => {
    const held = (pattern: string) =>
      workspacesHeldBy(pattern, fleet).map((ws) => `${ws.workgroupName}/${ws.workspaceName}`);
    expect(held('*/kg')).toEqual(['dev-alpha/kg', 'dev-gamma/kg', 'staging-us/kg']);
    expect(held('wg-g/ws-4')).toEqual(['dev-gamma/lineage']);
    expect(held('nosuch-wg/nosuch')).toEqual([]);
  });
});

describe('holdCoverage: whether a held workspace is under a window or a pause or resume job', () => {
  const policy = parsePolicy(
    `version: 1
windows:
  office:
    target: { workgroups: ["dev-*"], exclude: ["dev-gamma/lineage"] }
    uptime: "Mon-Fri 07:30-19:30"
  late:
    target: { workgroups: ["wg-a"], workspaces: ["etl"] }
    uptime: "Mon-Fri 10:00-22:00"
jobs:
  staging-pause:
    schedule: "0 20 * * 1-5"
    action: pause
    target: { workgroups: ["staging-*"] }
  audit:
    schedule: "0 6 * * 1"
    action: allow-list-audit
    target: { workgroups: ["dev-gamma"] }
  parked-resume:
    schedule: "0 7 * * 1-5"
    action: resume
    target: { workgroups: ["dev-gamma"] }
    suspend: true
`,
    'p.yaml',
    { registry: actionRegistry, env: {} },
  );
  const coverage = holdCoverage(policy.jobs, fleet);

  it('names the one window a workspace is under: it brings a held workspace to its state', () => {
    expect(coverage('wg-a/ws-1')).toEqual({ windows: ['office'], jobs: [] });
    expect(honoursHolds(coverage('wg-a/ws-1'))).toBe(true);
  });

  it('finds nothing acting on a workspace excluded from every window and targeted by no pause or resume job', () => {
    // the audit does not read holds, and a suspended resume job runs nothing
    expect(coverage('wg-g/ws-4')).toEqual({ windows: [], jobs: [] });
    expect(honoursHolds(coverage('wg-g/ws-4'))).toBe(false);
  });

  it('counts a pause or resume job that targets the workspace', () => {
    expect(coverage('wg-s/ws-5')).toEqual({ windows: [], jobs: ['staging-pause'] });
    expect(honoursHolds(coverage('wg-s/ws-5'))).toBe(true);
  });

  it('finds nothing acting on a workspace under two windows at once: both leave it alone', () => {
    expect(coverage('wg-a/ws-2')).toEqual({ windows: ['office', 'late'], jobs: [] });
    expect(honoursHolds(coverage('wg-a/ws-2'))).toBe(false);
  });
});
