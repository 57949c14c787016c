import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Metrics, type MetricsOptions } from '../../../src/ops/index.js';

/**
 * deploy/grafana/nightshift.json charts what `/metrics` exports: every name its queries use is
 * one the real `Metrics` registers (as every role's ops server builds it), and every nightshift
 * metric has a panel. A renamed metric fails here, not as an empty panel in someone's Grafana.
 */

const root = fileURLToPath(new URL('../../..', import.meta.url));

interface Target {
  refId: string;
  expr: string;
  datasource?: { uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { uid?: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query?: string | { query: string };
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
}

const dashboard = JSON.parse(readFileSync(join(root, 'deploy/grafana/nightshift.json'), 'utf8')) as Dashboard;
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
const charts = panels.filter((panel) => panel.type !== 'row');
const expressions = charts.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));

/** The series names `/metrics` exposes: a histogram's as `_bucket`, `_sum` and `_count`, a summary's as `_sum` and `_count`. */
function exportedNames(): Set<string> {
  // what startOpsRole gives every role: the fleet metrics too, and Node's process metrics
  const fleet: MetricsOptions['fleet'] = {
    snapshot: async () => ({ drift: [], stranded: [], holds: { active: 0, stopped: 0 }, hours: 0, cost: {} }),
  };
  const names = new Set<string>();
  for (const metric of new Metrics({ fleet }).registry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string };
    names.add(name);
    const suffixes =
      type === 'histogram' ? ['_bucket', '_sum', '_count'] : type === 'summary' ? ['_sum', '_count'] : [];
    for (const suffix of suffixes) names.add(`${name}${suffix}`);
  }
  return names;
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: what is left once strings, label matchers,
 * ranges, grouping label lists and Grafana variables are taken out, less function names
 * (followed by a parenthesis) and operators.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  return [...bare.matchAll(/(?<![\w.])[a-zA-Z_:][\w:]*/g)]
    .filter((match) => !/^\s*\(/.test(bare.slice((match.index ?? 0) + match[0].length)))
    .map((match) => match[0])
    .filter((word) => !KEYWORDS.has(word.toLowerCase()));
}

/** The metric a `label_values(metric, label)` variable reads. */
function variableMetric(variable: Variable): string | undefined {
  const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
  return /label_values\(\s*([a-zA-Z_:][\w:]*)\s*,/.exec(query ?? '')?.[1];
}

describe('deploy/grafana/nightshift.json', () => {
  const exported = exportedNames();

  it('queries only metrics that /metrics exports', () => {
    for (const expr of expressions) {
      const names = metricNames(expr);
      expect(names.length, expr).toBeGreaterThan(0);
      expect(
        names.filter((name) => !exported.has(name)),
        expr,
      ).toEqual([]);
    }
  });

  it('charts every nightshift metric /metrics exports', () => {
    const charted = new Set(expressions.flatMap(metricNames));
    const nightshift = [...exported].filter(
      (name) => name.startsWith('nightshift_') && !/_(bucket|sum|count)$/.test(name),
    );
    expect(nightshift.length).toBeGreaterThan(10);
    const missing = nightshift.filter(
      (name) =>
        ![name, `${name}_bucket`, `${name}_sum`, `${name}_count`].some((series) => charted.has(series)),
    );
    expect(missing).toEqual([]);
  });

  it('reads its variables from exported metrics, and every variable a query uses is defined', () => {
    const variables = dashboard.templating.list;
    for (const variable of variables.filter((candidate) => candidate.type === 'query')) {
      expect(exported.has(variableMetric(variable) ?? ''), variable.name).toBe(true);
    }
    const defined = new Set(variables.map((variable) => variable.name));
    const used = expressions.flatMap((expr) =>
      [...expr.matchAll(/\$\{?(\w+)\}?/g)].map((match) => match[1] as string),
    );
    // Grafana's own ($__rate_interval, $__range…) need no definition
    expect(used.filter((name) => !name.startsWith('__') && !defined.has(name))).toEqual([]);
  });

  it('is a dashboard Grafana imports: unique panel ids, a place on the grid, queries against the chosen data source', () => {
    expect(dashboard.uid).toEqual(expect.any(String));
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const ids = panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(dashboard.templating.list.find((variable) => variable.type === 'datasource')?.name).toBe(
      'datasource',
    );
    for (const panel of charts) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a template
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      const refIds = (panel.targets ?? []).map((target) => target.refId);
      expect(refIds.length, panel.title).toBeGreaterThan(0);
      expect(new Set(refIds).size, panel.title).toBe(refIds.length);
    }
  });

  it('reads metric names out of PromQL (guards the extraction itself)', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, operation) (rate(a_bucket{job=~"$job", x="y{z}"}[$__rate_interval])))' +
          ' / on (instance) group_left b_total and c > 26 * 3600 - time()',
      ),
    ).toEqual(['a_bucket', 'b_total', 'c']);
    expect(metricNames('count(count by (sha) (nightshift_policy_info))')).toEqual(['nightshift_policy_info']);
  });
});
