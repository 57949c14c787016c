import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt } from '../../../bench/harness/nightshift-process.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A repository of `files` (path from its root → seconds since the epoch it was last written). */
function repository(files: Record<string, number>): string {
  const root = mkdtempSync(join(tmpdir(), 'nightshift-built-'));
  roots.push(root);
  for (const [file, seconds] of Object.entries(files)) {
    const path = join(root, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '');
    utimesSync(path, seconds, seconds);
  }
  return root;
}

const built = (file: string) => join('dist', file.replace(/\.ts$/, '.js'));

describe('assertBuilt', () => {
  it('passes when every source of src/ and jobs/ is older than its build', () => {
    const sources = ['src/cli/main.ts', 'src/store/deep/nested.ts', 'jobs/pause.ts'];
    const root = repository(
      Object.fromEntries([
        ...sources.map((file) => [file, 100]),
        ...sources.map((file) => [built(file), 200]),
      ]),
    );
    expect(() => assertBuilt(root)).not.toThrow();
  });

  it('names a source changed since the build, wherever it is: no list of sources to forget one in', () => {
    const root = repository({
      'src/cli/main.ts': 100,
      [built('src/cli/main.ts')]: 200,
      'src/store/deep/nested.ts': 300,
      [built('src/store/deep/nested.ts')]: 200,
      'jobs/pause.ts': 100,
      [built('jobs/pause.ts')]: 200,
    });
    expect(() => assertBuilt(root)).toThrow(
      /older than src\/store\/deep\/nested\.ts: run `npm run build` first/,
    );
  });

  it('names a source the build has never compiled, and says when there is no build at all', () => {
    const root = repository({
      'src/cli/main.ts': 100,
      [built('src/cli/main.ts')]: 200,
      'jobs/new-action.ts': 50,
    });
    expect(() => assertBuilt(root)).toThrow(/older than jobs\/new-action\.ts/);
    expect(() => assertBuilt(repository({ 'src/cli/main.ts': 100, 'jobs/pause.ts': 100 }))).toThrow(
      /is missing: run `npm run build`/,
    );
  });
});
