import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, startCli } from '../../helpers/engine.js';

const VALID = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

/** Two problems: a schedule that is no cron, an action that does not exist. */
const INVALID = `version: 1
jobs:
  nightly-pause:
    schedule: "every evening"
    action: pauze
    target: { workgroups: ["*"] }
`;

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-run-json-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `nightshift run … --json`, no Redis: usage errors come before anything connects. */
async function runJson(text: string, job: string) {
  const file = join(dir, `${job}-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  const cli = startCli(['run', file, job, '--inline', '--json'], { REDIS_URL: '' });
  const code = await cli.exited;
  return { file, code, stdout: cli.stdout(), stderr: cli.stderr() };
}

describe('run --json on bad usage', () => {
  it('an invalid policy prints { error, message, problems: [{ file, line, col, message }] } on stdout, exit 2', async () => {
    const { file, code, stdout, stderr } = await runJson(INVALID, 'nightly-pause');
    expect(code).toBe(2);
    const error = JSON.parse(stdout) as { error: string; message: string; problems: unknown[] };
    expect(error).toEqual({
      error: 'invalid-policy',
      message: 'invalid policy (2 problems)',
      problems: [
        { file, line: 4, col: expect.any(Number), message: expect.stringContaining('schedule') },
        { file, line: 5, col: expect.any(Number), message: expect.stringContaining('pauze') },
      ],
    });
    // people still read every problem on stderr, as file:line:col: message
    expect(stderr).toContain(`${file}:4:`);
    expect(stderr).toContain(`${file}:5:`);
  });

  it('an unknown job prints { error: "unknown-job", message, suggestion } on stdout, exit 2', async () => {
    const { code, stdout } = await runJson(VALID, 'nightly-paus');
    expect(code).toBe(2);
    expect(JSON.parse(stdout)).toEqual({
      error: 'unknown-job',
      message: expect.stringMatching(
        /^no job or window "nightly-paus" in .*; did you mean "nightly-pause"\?$/,
      ),
      suggestion: 'nightly-pause',
    });
  });
});
