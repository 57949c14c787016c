import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What keeps the test loop fast: no unit test starts a process or a Redis (`npm run test:unit`
 * needs neither them nor a build), integration files can share a worker's modules (vitest's
 * `isolate: false`), and the benchmarks stand on their own.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const self = path.join('test', 'unit', 'test-layout.test.ts');

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** The files among `files` whose text matches `pattern`, each with the first match. */
function matching(files: readonly string[], pattern: RegExp): string[] {
  return files.flatMap((file) => {
    const match = pattern.exec(readFileSync(path.join(root, file), 'utf8'));
    return match ? [`${file}: ${match[0]}`] : [];
  });
}

describe('the layout of the tests', () => {
  it('keeps child processes, Redis and the built CLI out of test/unit (they belong in test/integration)', () => {
    const unit = tsFiles('test/unit').filter((file) => file !== self);
    const starts =
      /node:child_process|process\.execPath|helpers\/redis\.js|\b(startCli|useEngineHarness|startTestRedis|useTestRedisClient|startLocalRedis)\b|bin\/nightshift\.js|\bdist\//;
    expect(matching(unit, starts)).toEqual([]);
  });

  it('keeps module mocks, stubbed globals and fake timers out of test/integration, whose files share their modules', () => {
    const leaks =
      /vi\.(mock|doMock|hoisted|stubEnv|stubGlobal|useFakeTimers)\b|process\.env\.\w+\s*=[^=]|delete process\.env/;
    expect(matching(tsFiles('test/integration'), leaks)).toEqual([]);
  });

  it('lets bench/ import nothing from test/', () => {
    expect(matching(tsFiles('bench'), /from '(\.\.\/)+test\//)).toEqual([]);
  });
});
