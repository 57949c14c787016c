import { resolve } from 'node:path';
import { z } from 'zod';
import type { Workspace } from '../src/api/index.js';
import {
  type Action,
  type PlanContext,
  type SelectedWorkspace,
  STATUS,
  type TargetRef,
} from '../src/engine/index.js';

const FORMATS = ['json', 'csv', 'markdown'] as const;
const GROUPINGS = ['workgroup', 'region', 'status', 'type'] as const;
type Format = (typeof FORMATS)[number];
type Grouping = (typeof GROUPINGS)[number];

const params = z.strictObject({
  output: z.string().min(1).meta({
    description:
      'File to write (replaced atomically; missing folders are created). A relative path is taken from the working directory of the process that runs the job.',
  }),
  format: z.enum(FORMATS).optional().meta({ description: 'json, csv or markdown.', default: 'json' }),
  groupBy: z.enum(GROUPINGS).optional().meta({
    description: 'What the subtotals are per: workgroup, region, status or type (workspace_type.typeName).',
    default: 'workgroup',
  }),
});
type Params = z.output<typeof params>;

/** One workspace as the report lists it: the API's own field names, sizes in bytes. */
interface Row {
  workgroup_id: string;
  workgroup_name: string;
  workspace_id: string;
  workspace_name: string;
  status: string | null;
  region: string | null;
  database_name: string | null;
  svc_version: string | null;
  enable_ha: boolean | null;
  replicas: number | null;
  workspace_type: {
    typeName: string | null;
    cpu: string | null;
    memory: string | null;
    ha: number | null;
    partition: number | null;
  };
  vertex_count: number | null;
  edge_count: number | null;
  graph_topology_size_bytes: number | null;
  folder_statistics: {
    total_size: number | null;
    billed_size: number | null;
    backup_size: number | null;
    log_size: number | null;
    vector_size: number | null;
  };
}

/** Figures for a set of workspaces. `other` counts those neither running nor stopped (mid-transition). */
interface Summary {
  workspaces: number;
  running: number;
  stopped: number;
  other: number;
  byStatus: Record<string, number>;
  vertices: number;
  edges: number;
  topologyBytes: number;
  totalSizeBytes: number;
  billedSizeBytes: number;
}

interface Group extends Summary {
  key: string;
  workgroupId?: string;
}

interface Report {
  format: 'nightshift-inventory/1';
  generatedAt: string;
  job: string;
  groupBy: Grouping;
  workgroups: number;
  totals: Summary;
  groups: Group[];
  workspaces: Row[];
}

function toRow(selected: SelectedWorkspace, ws: Workspace): Row {
  const type = ws.workspace_type;
  const stats = ws.folder_statistics;
  return {
    workgroup_id: selected.workgroupId,
    workgroup_name: selected.workgroupName,
    workspace_id: selected.workspaceId,
    workspace_name: ws.name ?? selected.workspaceName,
    status: ws.status ?? null,
    region: ws.region ?? selected.region ?? null,
    database_name: ws.database_name ?? null,
    svc_version: ws.svc_version ?? null,
    enable_ha: ws.enable_ha ?? null,
    replicas: ws.replicas ?? null,
    workspace_type: {
      typeName: type?.typeName ?? null,
      cpu: type?.cpu ?? null,
      memory: type?.memory ?? null,
      ha: type?.ha ?? null,
      partition: type?.partition ?? null,
    },
    vertex_count: ws.vertex_count ?? null,
    edge_count: ws.edge_count ?? null,
    graph_topology_size_bytes: ws.graph_topology_size_bytes ?? null,
    folder_statistics: {
      total_size: stats?.total_size ?? null,
      billed_size: stats?.billed_size ?? null,
      backup_size: stats?.backup_size ?? null,
      log_size: stats?.log_size ?? null,
      vector_size: stats?.vector_size ?? null,
    },
  };
}

function summarise(rows: readonly Row[]): Summary {
  const summary: Summary = {
    workspaces: 0,
    running: 0,
    stopped: 0,
    other: 0,
    byStatus: {},
    vertices: 0,
    edges: 0,
    topologyBytes: 0,
    totalSizeBytes: 0,
    billedSizeBytes: 0,
  };
  for (const row of rows) {
    const status = row.status ?? 'unknown';
    summary.workspaces += 1;
    if (status === STATUS.active) summary.running += 1;
    else if (status === STATUS.stopped) summary.stopped += 1;
    else summary.other += 1;
    summary.byStatus[status] = (summary.byStatus[status] ?? 0) + 1;
    summary.vertices += row.vertex_count ?? 0;
    summary.edges += row.edge_count ?? 0;
    summary.topologyBytes += row.graph_topology_size_bytes ?? 0;
    summary.totalSizeBytes += row.folder_statistics.total_size ?? 0;
    summary.billedSizeBytes += row.folder_statistics.billed_size ?? 0;
  }
  summary.byStatus = Object.fromEntries(
    Object.entries(summary.byStatus).sort(([a], [b]) => a.localeCompare(b)),
  );
  return summary;
}

const GROUP_KEY: Record<Grouping, (row: Row) => string> = {
  workgroup: (row) => row.workgroup_id,
  region: (row) => row.region ?? 'unknown',
  status: (row) => row.status ?? 'unknown',
  type: (row) => row.workspace_type.typeName ?? 'unknown',
};

function buildReport(ctx: PlanContext, groupBy: Grouping): Report {
  const rows = ctx.workspaces
    .map((selected) =>
      toRow(selected, ctx.fleet.workspace(selected.workgroupId, selected.workspaceId) ?? selected.workspace),
    )
    .sort(
      (a, b) =>
        a.workgroup_name.localeCompare(b.workgroup_name) || a.workspace_name.localeCompare(b.workspace_name),
    );
  const byKey = new Map<string, Row[]>();
  for (const row of rows) {
    const key = GROUP_KEY[groupBy](row);
    byKey.set(key, [...(byKey.get(key) ?? []), row]);
  }
  const groups = [...byKey.entries()].map(([key, members]): Group => {
    const summary = summarise(members);
    const first = members[0] as Row;
    return groupBy === 'workgroup'
      ? { key: first.workgroup_name, workgroupId: key, ...summary }
      : { key, ...summary };
  });
  groups.sort((a, b) => a.key.localeCompare(b.key));
  return {
    format: 'nightshift-inventory/1',
    generatedAt: ctx.now().toISOString(),
    job: ctx.job.name,
    groupBy,
    workgroups: new Set(rows.map((row) => row.workgroup_id)).size,
    totals: summarise(rows),
    groups,
    workspaces: rows,
  };
}

const CSV_COLUMNS: readonly [string, (row: Row) => string | number | boolean | null][] = [
  ['workgroup_id', (r) => r.workgroup_id],
  ['workgroup_name', (r) => r.workgroup_name],
  ['workspace_id', (r) => r.workspace_id],
  ['workspace_name', (r) => r.workspace_name],
  ['status', (r) => r.status],
  ['region', (r) => r.region],
  ['database_name', (r) => r.database_name],
  ['svc_version', (r) => r.svc_version],
  ['enable_ha', (r) => r.enable_ha],
  ['replicas', (r) => r.replicas],
  ['workspace_type.typeName', (r) => r.workspace_type.typeName],
  ['workspace_type.cpu', (r) => r.workspace_type.cpu],
  ['workspace_type.memory', (r) => r.workspace_type.memory],
  ['workspace_type.ha', (r) => r.workspace_type.ha],
  ['workspace_type.partition', (r) => r.workspace_type.partition],
  ['vertex_count', (r) => r.vertex_count],
  ['edge_count', (r) => r.edge_count],
  ['graph_topology_size_bytes', (r) => r.graph_topology_size_bytes],
  ['folder_statistics.total_size', (r) => r.folder_statistics.total_size],
  ['folder_statistics.billed_size', (r) => r.folder_statistics.billed_size],
  ['folder_statistics.backup_size', (r) => r.folder_statistics.backup_size],
  ['folder_statistics.log_size', (r) => r.folder_statistics.log_size],
  ['folder_statistics.vector_size', (r) => r.folder_statistics.vector_size],
];

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvField(value: string | number | boolean | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One line per workspace: a table has no room for subtotals, which JSON and Markdown carry. */
function toCsv(report: Report): string {
  const lines = [CSV_COLUMNS.map(([name]) => name).join(',')];
  for (const row of report.workspaces) lines.push(CSV_COLUMNS.map(([, get]) => csvField(get(row))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

const count = (n: number) => n.toLocaleString('en-US');

/** Bytes in binary units, for people; JSON and CSV keep exact bytes. */
function size(bytes: number | null): string {
  if (bytes === null) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function cell(value: string | number | null): string {
  return value === null ? '' : String(value).replaceAll('|', '\\|').replaceAll(/\r?\n/g, ' ');
}

/** A Markdown table; the first `textColumns` columns are left-aligned, the figures after them right-aligned. */
function table(
  header: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
  textColumns: number,
): string {
  return [
    `| ${header.map(cell).join(' | ')} |`,
    `| ${header.map((_, i) => (i < textColumns ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ].join('\n');
}

const GROUP_TITLE: Record<Grouping, string> = {
  workgroup: 'Workgroup',
  region: 'Region',
  status: 'Status',
  type: 'Type',
};

function summaryCells(s: Summary): (string | number)[] {
  return [
    count(s.workspaces),
    count(s.running),
    count(s.stopped),
    count(s.other),
    count(s.vertices),
    count(s.edges),
    size(s.totalSizeBytes),
    size(s.billedSizeBytes),
  ];
}
const SUMMARY_HEADER = [
  'Workspaces',
  'Running',
  'Stopped',
  'Other',
  'Vertices',
  'Edges',
  'Total size',
  'Billed size',
];

function toMarkdown(report: Report): string {
  const { totals } = report;
  return `# Fleet inventory

Generated ${report.generatedAt} by job \`${report.job}\`: ${count(totals.workspaces)} workspaces in ${count(report.workgroups)} workgroups.

## Totals

${table(SUMMARY_HEADER, [summaryCells(totals)], 0)}

## By ${GROUP_TITLE[report.groupBy].toLowerCase()}

${table(
  [GROUP_TITLE[report.groupBy], ...SUMMARY_HEADER],
  report.groups.map((group) => [group.key, ...summaryCells(group)]),
  1,
)}

## Workspaces

${table(
  [
    'Workgroup',
    'Workspace',
    'Status',
    'Type',
    'vCPU',
    'Memory',
    'Vertices',
    'Edges',
    'Total size',
    'Billed size',
  ],
  report.workspaces.map((row) => [
    row.workgroup_name,
    row.workspace_name,
    row.status,
    row.workspace_type.typeName,
    row.workspace_type.cpu,
    row.workspace_type.memory,
    row.vertex_count === null ? null : count(row.vertex_count),
    row.edge_count === null ? null : count(row.edge_count),
    size(row.folder_statistics.total_size),
    size(row.folder_statistics.billed_size),
  ]),
  4,
)}
`;
}

const RENDER: Record<Format, (report: Report) => string> = {
  json: (report) => `${JSON.stringify(report, null, 2)}\n`,
  csv: toCsv,
  markdown: toMarkdown,
};

function settings(p: Params) {
  return { output: resolve(p.output), format: p.format ?? 'json', groupBy: p.groupBy ?? 'workgroup' };
}

function reportRef(output: string): TargetRef {
  return { key: output };
}

function evidenceOf(report: Report, output: string, format: Format): Record<string, unknown> {
  return { output, format, groupBy: report.groupBy, workgroups: report.workgroups, totals: report.totals };
}

/**
 * Writes a report of the selected workspaces (status, type and sizes, vertex and edge counts,
 * per group and in total) from the fleet the run listed: it makes no API call of its own.
 */
export const inventory: Action<typeof params> = {
  name: 'inventory',
  description: 'Write a report of the selected workspaces (status, sizes, counts) as JSON, CSV or Markdown.',
  destructive: false,
  scope: 'workspace',
  params,
  example: `version: 1
jobs:
  nightly-inventory:
    description: Snapshot the whole fleet for the capacity review
    schedule: "0 2 * * *"
    action: inventory
    target: { workgroups: ["*"] }
    with:
      format: markdown
      output: /var/lib/nightshift/reports/inventory.md
      groupBy: workgroup
`,

  async plan(ctx, p) {
    const { output, format, groupBy } = settings(p);
    const report = buildReport(ctx, groupBy);
    ctx.evidence(evidenceOf(report, output, format));
    await ctx.forEachTarget([output], reportRef, async () => ({
      outcome: 'planned',
      reason: `would write ${report.totals.workspaces} workspaces in ${report.workgroups} workgroups to ${output} (${format}, by ${groupBy})${(await ctx.files.exists(output)) ? ', replacing the file there' : ''}`,
      detail: { output, format, groupBy },
    }));
  },

  async run(ctx, p) {
    const { output, format, groupBy } = settings(p);
    const report = buildReport(ctx, groupBy);
    ctx.evidence(evidenceOf(report, output, format));
    await ctx.forEachTarget([output], reportRef, async () => {
      const content = RENDER[format](report);
      await ctx.files.writeAtomically(output, content);
      ctx.log.info({ output, format, workspaces: report.totals.workspaces }, 'inventory written');
      return {
        outcome: 'succeeded',
        reason: `wrote ${report.totals.workspaces} workspaces in ${report.workgroups} workgroups (${format})`,
        detail: { output, format, bytes: Buffer.byteLength(content) },
      };
    });
  },
};
