import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The folder rules of docs/architecture.md, checked on the source itself: data flows one way
 * (cli → scheduler, queue, ops, notify → engine → policy, store, api), so a change to one
 * behaviour has one place to go.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Which folders each folder may import from (besides itself). `cli` wires everything. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  errors: [],
  time: [],
  config: ['time', 'errors'],
  log: ['time', 'config', 'errors'],
  api: ['time', 'errors', 'log', 'config'],
  policy: ['time', 'errors', 'log', 'config'],
  engine: ['time', 'policy', 'api', 'errors', 'log', 'config'],
  store: ['time', 'engine', 'policy', 'api', 'errors', 'log', 'config'],
  notify: ['time', 'store', 'engine', 'policy', 'api', 'errors', 'log', 'config'],
  control: ['time', 'store', 'engine', 'policy', 'api', 'errors', 'log', 'config'],
  ops: ['time', 'control', 'store', 'engine', 'policy', 'api', 'errors', 'log', 'config'],
  queue: ['time', 'notify', 'store', 'engine', 'policy', 'api', 'errors', 'log', 'config'],
  scheduler: ['time', 'queue', 'notify', 'store', 'engine', 'policy', 'api', 'errors', 'log', 'config'],
  sim: ['time', 'api', 'errors', 'log', 'config'],
  jobs: ['time', 'engine', 'api', 'errors'],
  '(root)': ['time', 'api', 'sim', 'errors'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

const files = [...sourceFiles('src'), ...sourceFiles('jobs')];

/** `src/engine/fleet.ts` → `engine`; every file under `jobs/` is `jobs`. */
function folderOf(file: string): string {
  const parts = file.split(path.sep);
  if (parts[0] === 'jobs') return 'jobs';
  return parts.length > 2 ? (parts[1] as string) : '(root)';
}

interface Edge {
  from: string;
  to: string;
  file: string;
  target: string;
}

const edges: Edge[] = files.flatMap((file) => {
  const text = readFileSync(path.join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].flatMap((match) => {
    const target = path.normalize(path.join(path.dirname(file), match[1] as string));
    const from = folderOf(file);
    const to = folderOf(target);
    return from === to ? [] : [{ from, to, file, target }];
  });
});

describe('the architecture of src/ and jobs/', () => {
  it('imports across folders only in the one direction docs/architecture.md draws', () => {
    const wrong = edges
      .filter((edge) => edge.from !== 'cli' && !(MAY_IMPORT[edge.from] ?? []).includes(edge.to))
      .map((edge) => `${edge.file} imports ${edge.target} (${edge.from} → ${edge.to})`);
    expect(wrong).toEqual([]);
  });

  it('enters another folder only through its index.ts', () => {
    const deep = edges
      .filter((edge) => edge.to !== 'jobs' && path.basename(edge.target) !== 'index.js')
      .map((edge) => `${edge.file} imports ${edge.target}`);
    expect(deep).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    const graph = new Map<string, Set<string>>();
    for (const edge of edges) graph.set(edge.from, (graph.get(edge.from) ?? new Set()).add(edge.to));
    const cycles: string[] = [];
    const visit = (node: string, trail: string[]): void => {
      if (trail.includes(node)) {
        cycles.push([...trail.slice(trail.indexOf(node)), node].join(' → '));
        return;
      }
      for (const next of graph.get(node) ?? []) visit(next, [...trail, node]);
    };
    for (const node of graph.keys()) visit(node, []);
    expect([...new Set(cycles)]).toEqual([]);
  });

  it('reads process.env only under src/config', () => {
    const readers = files.filter(
      (file) =>
        !file.startsWith(path.join('src', 'config')) &&
        /process\.env\b/.test(readFileSync(path.join(root, file), 'utf8')),
    );
    expect(readers).toEqual([]);
  });

  it('keeps every file in src/, jobs/ and bench/ within 450 lines', () => {
    const long = [...files, ...sourceFiles('bench')]
      .map((file) => ({ file, lines: readFileSync(path.join(root, file), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 450)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it('depends on one YAML library', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const yamlLibraries = Object.keys(pkg.dependencies).filter((name) => /yaml/i.test(name));
    expect(yamlLibraries).toHaveLength(1);
  });
});
