import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStateFile, parseState, type SimState, StateError, seedState } from '../../../src/sim/index.js';

const base = () => seedState({ seed: 4, fleet: { workgroups: 2, workspacesPerWorkgroup: 2 } });

function errorOf(input: unknown): string {
  try {
    parseState(input, 'fleet.json');
  } catch (error) {
    expect(error).toBeInstanceOf(StateError);
    return (error as Error).message;
  }
  throw new Error('the state was accepted');
}

describe('parseState', () => {
  it('accepts its own output unchanged, byte for byte', () => {
    const state = base();
    expect(JSON.stringify(parseState(JSON.parse(JSON.stringify(state)), 'x'))).toBe(JSON.stringify(state));
  });

  it('fills in defaults for settings and transitions', () => {
    const { settings: _settings, transitions: _transitions, ...rest } = base();
    const parsed = parseState(rest, 'x');
    expect(parsed.settings).toEqual({ org_users_shape: 'auto' });
    expect(parsed.transitions).toEqual([]);
  });

  it('names the source and the path of an unknown key', () => {
    const state = base() as SimState & { workspaces: Record<string, unknown>[] };
    (state.workspaces[1] as Record<string, unknown>).stauts = 'Active';
    expect(errorOf(state)).toBe('fleet.json: workspaces[1]: Unrecognized key: "stauts"');
  });

  it('names the path of a value of the wrong type', () => {
    const state = base();
    (state.backups[0] as { vertex_count: unknown }).vertex_count = 'many';
    expect(errorOf(state)).toMatch(/^fleet\.json: backups\[0\]\.vertex_count: /);
  });

  it('names a relation that points nowhere', () => {
    const state = base();
    (state.workgroups[0] as { cloud_provider_id: string }).cloud_provider_id = 'cp-gone';
    expect(errorOf(state)).toBe('fleet.json: workgroups[0].cloud_provider_id: no cloud provider "cp-gone"');
  });

  it('names a duplicate id', () => {
    const state = base();
    const [first, second] = state.workspaces;
    if (!first || !second) throw new Error('seed too small');
    second.workspace_id = first.workspace_id;
    expect(errorOf(state)).toContain(`workspaces[1].workspace_id: duplicate id "${first.workspace_id}"`);
  });

  it('names an allow-list entry that is not a CIDR', () => {
    const state = base();
    const entry = state.workgroups[0]?.allow_list[0];
    if (!entry) throw new Error('seed too small');
    entry.cidr = '10.0.0.0/40';
    expect(errorOf(state)).toContain(
      'workgroups[0].allow_list[0].cidr: "10.0.0.0/40" has prefix length "40"',
    );
  });

  it('refuses a state of another format', () => {
    expect(errorOf({ ...base(), format: 'something-else' })).toMatch(/^fleet\.json: format: /);
    expect(errorOf([])).toMatch(/^fleet\.json: \(root\): /);
  });
});

describe('loadStateFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nightshift-sim-state-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a state written by JSON.stringify', async () => {
    const path = join(dir, 'ok.json');
    await writeFile(path, JSON.stringify(base()));
    expect((await loadStateFile(path)).workgroups).toHaveLength(2);
  });

  it('names the file when it cannot be read', async () => {
    const path = join(dir, 'missing.json');
    await expect(loadStateFile(path)).rejects.toThrow(`${path}: cannot read the state file (ENOENT)`);
  });

  it('names the file when it is not JSON', async () => {
    const path = join(dir, 'broken.json');
    await writeFile(path, '{"format":');
    await expect(loadStateFile(path)).rejects.toThrow(`${path}: not valid JSON`);
  });

  it('names the file and the path when the state is invalid', async () => {
    const path = join(dir, 'invalid.json');
    await writeFile(path, JSON.stringify({ ...base(), org: {} }));
    await expect(loadStateFile(path)).rejects.toThrow(`${path}: org.org_id: `);
  });
});
