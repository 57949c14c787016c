import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimState, seedState } from '../../../src/sim/index.js';
import { mutatingCalls, useActionSim } from '../../helpers/actions.js';

/** A name that needs quoting in CSV and escaping in Markdown. */
const AWKWARD_NAME = 'scratch, "old" | tmp';

const policy = (params: Record<string, unknown>, target = '{ workgroups: ["*"] }') => `version: 1
jobs:
  inventory:
    schedule: "0 2 * * *"
    action: inventory
    retry: { attempts: 3, backoff: 1s }
    target: ${target}
    with: ${JSON.stringify(params)}
`;

/** RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += char;
  }
  expect(quoted, 'an unclosed quote').toBe(false);
  expect(field + record.join(''), 'text after the last line break').toBe('');
  return records;
}

/** The Markdown tables under each `## ` heading, as rows of cells (escaped pipes kept as one cell). */
function markdownTables(text: string): Map<string, string[][]> {
  const tables = new Map<string, string[][]>();
  let heading = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) heading = line.slice(3);
    else if (line.startsWith('|')) {
      const cells = line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replaceAll('\\|', '|'));
      tables.set(heading, [...(tables.get(heading) ?? []), cells]);
    }
  }
  return tables;
}

/** A 4×4 fleet, one of whose workspaces is called {@link AWKWARD_NAME}. */
function fleet(): SimState {
  const state = seedState({ seed: 5, fleet: { workgroups: 4, workspacesPerWorkgroup: 4 } });
  const renamed = state.workspaces[1];
  if (renamed) renamed.name = AWKWARD_NAME;
  return state;
}

const number = (text: string | undefined) => Number((text ?? '').replaceAll(',', ''));

describe('inventory against the simulator', () => {
  const harness = useActionSim(fleet);
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nightshift-inventory-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const workspaces = () => harness.sim.state.workspaces;
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

  it('writes JSON whose totals and per-workgroup figures add up to the fleet, creating missing folders', async () => {
    const output = join(dir, 'nested', 'deeper', 'inventory.json');
    const run = await harness.run(policy({ output }), 'inventory');

    expect(run.summary.outcome).toBe('succeeded');
    expect(run.summary.targets).toEqual([
      expect.objectContaining({
        key: output,
        outcome: 'succeeded',
        reason: 'wrote 16 workspaces in 4 workgroups (json)',
      }),
    ]);
    const report = JSON.parse(await readFile(output, 'utf8'));
    expect(report.format).toBe('nightshift-inventory/1');
    expect(report.workspaces).toHaveLength(workspaces().length);
    expect(report.totals).toMatchObject({
      workspaces: workspaces().length,
      running: workspaces().filter((ws) => ws.status === 'Active').length,
      stopped: workspaces().filter((ws) => ws.status === 'Stopped').length,
      other: 0,
      vertices: sum(workspaces().map((ws) => ws.vertex_count)),
      edges: sum(workspaces().map((ws) => ws.edge_count)),
      totalSizeBytes: sum(workspaces().map((ws) => ws.folder_statistics?.total_size ?? 0)),
      billedSizeBytes: sum(workspaces().map((ws) => ws.folder_statistics?.billed_size ?? 0)),
    });
    expect(report.groups).toHaveLength(harness.sim.state.workgroups.length);
    for (const workgroup of harness.sim.state.workgroups) {
      const members = workspaces().filter((ws) => ws.workgroup_id === workgroup.workgroup_id);
      const group = report.groups.find(
        (g: { workgroupId: string }) => g.workgroupId === workgroup.workgroup_id,
      );
      expect(group).toMatchObject({
        key: workgroup.name,
        workspaces: members.length,
        vertices: sum(members.map((ws) => ws.vertex_count)),
        edges: sum(members.map((ws) => ws.edge_count)),
      });
    }
    const first = workspaces()[0];
    const row = report.workspaces.find(
      (r: { workspace_id: string }) => r.workspace_id === first?.workspace_id,
    );
    expect(row.workspace_type).toEqual(first?.workspace_type);
    expect(row.graph_topology_size_bytes).toBe(first?.graph_topology_size_bytes);
    expect(run.summary.evidence).toEqual({
      output,
      format: 'json',
      groupBy: 'workgroup',
      workgroups: 4,
      totals: report.totals,
    });
    expect(mutatingCalls(run)).toEqual([]);
  });

  it('writes CSV with a header and one well-formed row per workspace, quoting what needs it', async () => {
    const output = join(dir, 'inventory.csv');
    const run = await harness.run(policy({ output, format: 'csv' }), 'inventory');

    expect(run.summary.outcome).toBe('succeeded');
    const [header, ...rows] = parseCsv(await readFile(output, 'utf8'));
    expect(rows).toHaveLength(workspaces().length);
    for (const row of rows) expect(row).toHaveLength(header?.length ?? 0);
    const column = (name: string) => (header ?? []).indexOf(name);
    expect(rows.map((row) => row[column('workspace_name')])).toContain(AWKWARD_NAME);
    expect(sum(rows.map((row) => Number(row[column('vertex_count')])))).toBe(
      sum(workspaces().map((ws) => ws.vertex_count)),
    );
    expect(sum(rows.map((row) => Number(row[column('folder_statistics.total_size')])))).toBe(
      sum(workspaces().map((ws) => ws.folder_statistics?.total_size ?? 0)),
    );
  });

  it('writes Markdown tables with a separator row and a cell per column, and totals that match the fleet', async () => {
    const output = join(dir, 'inventory.md');
    const run = await harness.run(policy({ output, format: 'markdown' }), 'inventory');

    expect(run.summary.outcome).toBe('succeeded');
    const tables = markdownTables(await readFile(output, 'utf8'));
    expect([...tables.keys()]).toEqual(['Totals', 'By workgroup', 'Workspaces']);
    for (const [heading, [header, separator, ...rows]] of tables) {
      expect(
        separator?.every((cell) => /^-{3,}:?$/.test(cell)),
        heading,
      ).toBe(true);
      for (const row of [separator, ...rows]) expect(row, heading).toHaveLength(header?.length ?? 0);
    }
    const [totalsHeader, , totals] = tables.get('Totals') ?? [];
    const total = (name: string) => number(totals?.[totalsHeader?.indexOf(name) ?? -1]);
    expect(total('Workspaces')).toBe(workspaces().length);
    expect(total('Vertices')).toBe(sum(workspaces().map((ws) => ws.vertex_count)));
    expect(total('Edges')).toBe(sum(workspaces().map((ws) => ws.edge_count)));
    expect(total('Running') + total('Stopped') + total('Other')).toBe(workspaces().length);
    expect(tables.get('By workgroup')?.slice(2)).toHaveLength(harness.sim.state.workgroups.length);
    const workspaceRows = tables.get('Workspaces')?.slice(2) ?? [];
    expect(workspaceRows).toHaveLength(workspaces().length);
    expect(workspaceRows.map((row) => row[1])).toContain(AWKWARD_NAME);
  });

  it('groupBy status gives one subtotal per status, and only the targeted workspaces are listed', async () => {
    const output = join(dir, 'by-status.json');
    const run = await harness.run(
      policy({ output, groupBy: 'status' }, '{ workgroups: ["dev-*"] }'),
      'inventory',
    );

    expect(run.summary.outcome).toBe('succeeded');
    const report = JSON.parse(await readFile(output, 'utf8'));
    const devIds = new Set(
      harness.sim.state.workgroups.filter((wg) => wg.name.startsWith('dev-')).map((wg) => wg.workgroup_id),
    );
    const dev = workspaces().filter((ws) => devIds.has(ws.workgroup_id));
    expect(report.totals.workspaces).toBe(dev.length);
    const statuses = [...new Set(dev.map((ws) => ws.status))].sort();
    expect(report.groups.map((g: { key: string }) => g.key)).toEqual(statuses);
    for (const group of report.groups) {
      expect(group.workspaces).toBe(dev.filter((ws) => ws.status === group.key).length);
    }
  });

  it('replaces an existing report atomically and leaves no temporary file behind', async () => {
    const output = join(dir, 'replace', 'inventory.json');
    await harness.run(policy({ output }), 'inventory');
    await writeFile(output, 'stale');
    const run = await harness.run(policy({ output }), 'inventory');

    expect(run.summary.outcome).toBe('succeeded');
    expect(JSON.parse(await readFile(output, 'utf8')).totals.workspaces).toBe(workspaces().length);
    expect(await readdir(join(dir, 'replace'))).toEqual(['inventory.json']);
  });

  it('a dry run writes nothing, calls read-only operations only and says what it would write', async () => {
    const output = join(dir, 'dry', 'inventory.csv');
    const run = await harness.run(policy({ output, format: 'csv' }), 'inventory', { dryRun: true });

    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.targets).toEqual([
      expect.objectContaining({
        outcome: 'planned',
        reason: `would write 16 workspaces in 4 workgroups to ${output} (csv, by workgroup)`,
      }),
    ]);
    await expect(readdir(join(dir, 'dry'))).rejects.toThrow(/ENOENT/);
  });

  it('a dry run over an existing report says it would replace it, and leaves it as it was', async () => {
    const output = join(dir, 'dry-existing', 'inventory.json');
    await mkdir(join(dir, 'dry-existing'));
    await writeFile(output, 'kept');
    const run = await harness.run(policy({ output }), 'inventory', { dryRun: true });

    expect(run.summary.targets).toEqual([
      expect.objectContaining({
        outcome: 'planned',
        reason: `would write 16 workspaces in 4 workgroups to ${output} (json, by workgroup), replacing the file there`,
      }),
    ]);
    expect(await readFile(output, 'utf8')).toBe('kept');
  });

  it('a transient failure listing the fleet is retried and the report is written', async () => {
    const output = join(dir, 'retried.json');
    // with this seed the first listing draws an error and the second passes
    harness.sim.setFaults({ errorRate: 0.5, seed: 4, operations: ['listWorkgroups'] });
    const run = await harness.run(policy({ output }), 'inventory');
    expect(run.requests.map((entry) => entry.status)).toEqual([500, 200]);
    expect(run.summary.outcome).toBe('succeeded');
    expect(JSON.parse(await readFile(output, 'utf8')).totals.workspaces).toBe(workspaces().length);
  });

  it('a path that cannot be written fails the report once, naming the cause, and leaves nothing behind', async () => {
    const blocker = join(dir, 'a-file');
    await writeFile(blocker, 'not a folder');
    const output = join(blocker, 'inventory.json');
    const run = await harness.run(policy({ output }), 'inventory');

    expect(run.summary.outcome).toBe('failed');
    expect(run.summary.targets[0]).toMatchObject({ key: output, outcome: 'failed', attempts: 1 });
    expect(run.summary.targets[0]?.error?.message).toMatch(/ENOTDIR|EEXIST/);
    expect(await readFile(blocker, 'utf8')).toBe('not a folder');
  });
});
