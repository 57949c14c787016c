import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { formatProblem, POLICY_SCHEMA_PATH, PolicyError, parsePolicy } from '../../../src/policy/index.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const configDirectory = join(root, 'config');

function yamlFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry.name) ? [path] : [];
  });
}

const files = yamlFiles(configDirectory).map((path) => relative(root, path));
const env = {
  OPS_WEBHOOK: 'https://hooks.example.com/services/T0/B0/x',
  SECURITY_WEBHOOK: 'https://hooks.example.com/security',
  DRILL_BACKUP_ID: 'bk-0000',
  DEMO_BACKUP_ID: 'bk-0001',
  DEMO_UPTIME: 'Mon-Sun 00:01-00:02, Mon-Sun 00:03-00:04',
};

describe('config examples', () => {
  it('include the annotated policy, the demo, and an example per use case: cost saving, runbooks, compliance', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'config/policy.yaml',
        'config/demo.yaml',
        'config/examples/cost-saving.yaml',
        'config/examples/runbooks.yaml',
        'config/examples/compliance.yaml',
      ]),
    );
  });

  it.each(files)('%s validates with the registered actions, without warnings', (file) => {
    try {
      const policy = parsePolicy(readFileSync(join(root, file), 'utf8'), file, {
        registry: actionRegistry,
        env,
        // the examples' calendars hold 2026's dates
        now: new Date('2026-03-27T12:00:00Z'),
      });
      expect(policy.jobs.length).toBeGreaterThan(0);
      expect(policy.warnings.map(formatProblem)).toEqual([]);
    } catch (error) {
      if (error instanceof PolicyError) expect.fail(error.problems.map(formatProblem).join('\n'));
      throw error;
    }
  });

  it.each(['README.md', 'docs/windows.md'])(
    'the first policy example of %s validates, windows included',
    (doc) => {
      const text = readFileSync(join(root, doc), 'utf8');
      const example = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)]
        .map((block) => block[1] as string)
        .find((block) => /^version: 1$/m.test(block));
      expect(example, `no policy example in ${doc}`).toBeDefined();
      const policy = parsePolicy(example ?? '', doc, {
        registry: actionRegistry,
        env,
        now: new Date('2026-03-27T12:00:00Z'),
      });
      expect(policy.jobs.some((job) => job.window)).toBe(true);
    },
  );

  it.each(files)('%s starts with the yaml-language-server line pointing at the committed schema', (file) => {
    const firstLine = readFileSync(join(root, file), 'utf8').split('\n')[0] ?? '';
    const match = /^# yaml-language-server: \$schema=(.+)$/.exec(firstLine);
    expect(match, firstLine).not.toBeNull();
    const schemaPath = relative(root, join(root, file, '..', match?.[1] ?? ''));
    expect(schemaPath).toBe(POLICY_SCHEMA_PATH);
  });
});
