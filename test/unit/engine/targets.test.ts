import { describe, expect, it } from 'vitest';
import type { Workgroup } from '../../../src/api/schemas.js';
import {
  checkTargetLimit,
  countWorkgroups,
  countWorkspaces,
  selectTargets,
  selectWorkgroups,
} from '../../../src/engine/index.js';
import type { TargetSelector } from '../../../src/policy/index.js';

const WORKGROUPS: Workgroup[] = [
  {
    workgroup_id: 'wg-1',
    name: 'dev-alpha',
    region: 'eu-west',
    cloud_provider_id: 'cp-1',
    workspaces: [
      { workspace_id: 'ws-1', name: 'api-1', status: 'Running', database_id: 'db-1' },
      { workspace_id: 'ws-2', name: 'api-2', status: 'Paused' },
      { workspace_id: 'ws-3', name: 'scratch-x', status: 'Running' },
      { workspace_id: 'ws-4', name: '.hidden', status: 'Running' },
    ],
  },
  {
    workgroup_id: 'wg-2',
    name: 'dev-core',
    workspaces: [{ workspace_id: 'ws-5', name: 'shared', status: 'Running' }],
  },
  {
    workgroup_id: 'wg-3',
    name: 'prod',
    workspaces: [{ workspace_id: 'ws-6', name: 'api-1', status: 'Running' }],
  },
  {
    workgroup_id: 'wg-4',
    name: null,
    workspaces: [
      { workspace_id: 'ws-7', name: null, status: 'Running' },
      { workspace_id: null, name: 'ghost', status: 'Running' },
    ],
  },
  { workgroup_id: null, name: 'dev-no-id', workspaces: [{ workspace_id: 'ws-8', name: 'api-9' }] },
];

function selector(partial: Partial<TargetSelector> & Pick<TargetSelector, 'workgroups'>): TargetSelector {
  return { workspaces: ['*'], exclude: [], ...partial };
}

const ids = (entries: readonly { workspaceId: string }[]) => entries.map((entry) => entry.workspaceId);

describe('selectTargets', () => {
  it('picks every workspace of the workgroups whose names match, in the API’s order', () => {
    expect(ids(selectTargets(WORKGROUPS, selector({ workgroups: ['dev-*'] })))).toEqual([
      'ws-1',
      'ws-2',
      'ws-3',
      'ws-4',
      'ws-5',
    ]);
  });

  it('matches workgroup and workspace ids as well as names', () => {
    expect(ids(selectTargets(WORKGROUPS, selector({ workgroups: ['wg-3'], workspaces: ['ws-6'] })))).toEqual([
      'ws-6',
    ]);
  });

  it('narrows to workspaces whose names match', () => {
    expect(ids(selectTargets(WORKGROUPS, selector({ workgroups: ['*'], workspaces: ['api-*'] })))).toEqual([
      'ws-1',
      'ws-2',
      'ws-6',
    ]);
  });

  it('leaves out every workspace of a workgroup excluded with "workgroup/*"', () => {
    const selected = selectTargets(WORKGROUPS, selector({ workgroups: ['dev-*'], exclude: ['dev-core/*'] }));
    expect(ids(selected)).toEqual(['ws-1', 'ws-2', 'ws-3', 'ws-4']);
  });

  it('leaves out a whole workgroup excluded by its bare name', () => {
    expect(
      ids(selectTargets(WORKGROUPS, selector({ workgroups: ['dev-*'], exclude: ['dev-core'] }))),
    ).not.toContain('ws-5');
  });

  it('leaves out workspaces matching a "workgroup/workspace" exclude glob, by name or id', () => {
    const selected = selectTargets(
      WORKGROUPS,
      selector({ workgroups: ['dev-*'], exclude: ['dev-*/scratch-*', 'wg-1/ws-1'] }),
    );
    expect(ids(selected)).toEqual(['ws-2', 'ws-4', 'ws-5']);
  });

  it('lets "*" match names that start with a dot', () => {
    expect(ids(selectTargets(WORKGROUPS, selector({ workgroups: ['dev-alpha'] })))).toContain('ws-4');
  });

  it('matches case-sensitively, as names are in the API', () => {
    expect(selectTargets(WORKGROUPS, selector({ workgroups: ['DEV-*'] }))).toEqual([]);
  });

  it('lists a workspace once even when several globs match it', () => {
    expect(ids(selectTargets(WORKGROUPS, selector({ workgroups: ['prod', 'p*', 'wg-3'] })))).toEqual([
      'ws-6',
    ]);
  });

  it('skips workgroups and workspaces without ids, and falls back to ids for missing names', () => {
    const selected = selectTargets(WORKGROUPS, selector({ workgroups: ['*'] }));
    expect(ids(selected)).not.toContain('ws-8');
    expect(selected.map((entry) => entry.workspaceName)).not.toContain('ghost');
    expect(selected.find((entry) => entry.workspaceId === 'ws-7')).toMatchObject({
      workgroupId: 'wg-4',
      workgroupName: 'wg-4',
      workspaceName: 'ws-7',
    });
  });

  it('returns ids, names, status and the API record of each workspace', () => {
    const [first] = selectTargets(WORKGROUPS, selector({ workgroups: ['dev-alpha'], workspaces: ['api-1'] }));
    expect(first).toEqual({
      workgroupId: 'wg-1',
      workgroupName: 'dev-alpha',
      workspaceId: 'ws-1',
      workspaceName: 'api-1',
      status: 'Running',
      databaseId: 'db-1',
      region: 'eu-west',
      workspace: WORKGROUPS[0]?.workspaces?.[0],
    });
  });
});

describe('selectWorkgroups', () => {
  it('picks the matching workgroups, whatever their workspaces', () => {
    const selected = selectWorkgroups(
      WORKGROUPS,
      selector({ workgroups: ['dev-*'], workspaces: ['nothing-matches'] }),
    );
    expect(selected.map((entry) => entry.workgroupId)).toEqual(['wg-1', 'wg-2']);
  });

  it('leaves out workgroups excluded bare or with all their workspaces, but not those partly excluded', () => {
    const selected = selectWorkgroups(
      WORKGROUPS,
      selector({ workgroups: ['*'], exclude: ['dev-core/*', 'prod', 'dev-alpha/scratch-*'] }),
    );
    expect(selected.map((entry) => entry.workgroupId)).toEqual(['wg-1', 'wg-4']);
  });

  it('returns the workgroup’s ids, cloud provider and the API record', () => {
    const [first] = selectWorkgroups(WORKGROUPS, selector({ workgroups: ['dev-alpha'] }));
    expect(first).toMatchObject({ workgroupId: 'wg-1', workgroupName: 'dev-alpha', cloudProviderId: 'cp-1' });
    expect(first?.workgroup).toBe(WORKGROUPS[0]);
  });
});

describe('maxTargets', () => {
  it('counts only workspaces and workgroups that have ids', () => {
    expect(countWorkspaces(WORKGROUPS)).toBe(7);
    expect(countWorkgroups(WORKGROUPS)).toBe(4);
  });

  it('allows any number when no limit is set', () => {
    expect(checkTargetLimit(undefined, 10_000, 1)).toEqual({
      allowed: true,
      limit: Number.POSITIVE_INFINITY,
    });
  });

  it('refuses a run with more targets than the count', () => {
    expect(checkTargetLimit({ count: 5 }, 5, 100)).toEqual({ allowed: true, limit: 5 });
    expect(checkTargetLimit({ count: 5 }, 6, 100)).toEqual({ allowed: false, limit: 5 });
  });

  it('takes a percentage of all targets, rounded down, so 10% of 15 allows 1', () => {
    expect(checkTargetLimit({ percent: 10 }, 1, 15)).toEqual({ allowed: true, limit: 1 });
    expect(checkTargetLimit({ percent: 10 }, 2, 15)).toEqual({ allowed: false, limit: 1 });
  });

  it('refuses even one target when the percentage of a small fleet rounds down to zero', () => {
    expect(checkTargetLimit({ percent: 10 }, 1, 5)).toEqual({ allowed: false, limit: 0 });
  });
});
