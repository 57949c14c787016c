// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import { testEnv, testRegistry } from '../../fixtures/policies/test-registry.js';

/** `nightshift validate --json …` in-process: stdout, stderr and the exit code it set. */
async function validateJson(...files: string[]) {
  let stdout = '';
  let stderr = '';
  let exitCode: number | undefined;
  const program = buildProgram({
    registry: testRegistry,
    env: testEnv,
    now: () => new Date('2026-03-27T12:00:00Z'),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    setExitCode: (code) => {
      exitCode = code;
    },
  });
  await program.parseAsync(['node', 'nightshift', 'validate', '--json', ...files]);
  return { stdout, stderr, exitCode };
}

const directory = mkdtempSync(join(tmpdir(), 'nightshift-validate-json-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(directory, name);
  writeFileSync(file, text);
  return file;
}

const GOOD = write(
  'good.yaml',
  `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * 1-5"
    action: pause
    target: { workgroups: ["dev-*"] }
`,
);

const BROKEN = write(
  'broken.yaml',
  `version: 1
jobs:
  a:
    schedul: "0 20 * * 1-5"
    action: pase
`,
);

const WARNED = write(
  'warned.yaml',
  `version: 1
jobs:
  evening:
    schedule: "* 19 * * 1-5"
    action: pause
    target: { workgroups: ["dev-*"] }
notifications:
  ops: { url: "\${MISSING_WEBHOOK}" }
`,
);

describe('nightshift validate --json', () => {
  it('prints [] and leaves the exit code at 0 when every file is valid', async () => {
    const result = await validateJson(GOOD);
    expect(JSON.parse(result.stdout)).toEqual([]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBeUndefined();
  });

  it('prints every problem of every file as { file, line, col, message, severity } on stdout only, and exits 2', async () => {
    const missing = join(directory, 'missing.yaml');
    const result = await validateJson(GOOD, BROKEN, missing);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('');
    const problems = JSON.parse(result.stdout) as {
      file: string;
      line: number;
      col: number;
      message: string;
      severity: string;
    }[];
    expect(problems).toEqual([
      {
        file: BROKEN,
        line: 4,
        col: 5,
        message: 'jobs.a: unknown key "schedul"; did you mean "schedule"?',
        severity: 'error',
      },
      {
        file: BROKEN,
        line: 5,
        col: 13,
        message: expect.stringMatching(/^jobs\.a\.action: unknown action "pase"; did you mean "pause"\?/),
        severity: 'error',
      },
      {
        file: missing,
        line: 1,
        col: 1,
        message: expect.stringMatching(/^cannot read the policy file: ENOENT/),
        severity: 'error',
      },
    ]);
    for (const problem of problems)
      expect(Object.keys(problem)).toEqual(['file', 'line', 'col', 'message', 'severity']);
  });

  it('marks warnings with "severity": "warning" and leaves the exit code at 0 when there are only warnings', async () => {
    const result = await validateJson(WARNED);
    expect(result.exitCode).toBeUndefined();
    expect(JSON.parse(result.stdout)).toEqual([
      {
        file: WARNED,
        line: 4,
        col: 15,
        message:
          'jobs.evening.schedule: "* 19 * * 1-5" fires every minute from 19:00 to 19:59; did you mean "0 19 * * 1-5"?',
        severity: 'warning',
      },
      {
        file: WARNED,
        line: 8,
        col: 15,
        message:
          'notifications.ops.url: environment variable MISSING_WEBHOOK is not set (set it, or give a default: "${MISSING_WEBHOOK:-default}")',
        severity: 'warning',
      },
    ]);
  });

  it('--strict-env turns an unset variable into an error and exits 2', async () => {
    const result = await validateJson('--strict-env', WARNED);
    expect(result.exitCode).toBe(2);
    expect(
      (JSON.parse(result.stdout) as { line: number; severity: string }[]).map(({ line, severity }) => [
        line,
        severity,
      ]),
    ).toEqual([
      [4, 'warning'],
      [8, 'error'],
    ]);
  });
});
