// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/store/local-server.js';
import { assertBuilt, startCli } from '../../helpers/engine.js';

function policyFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'nightshift-policy-warnings-')), 'policy.yaml');
  writeFileSync(file, text);
  return file;
}

const API = {
  NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
  NIGHTSHIFT_API_KEY: 'k',
  NIGHTSHIFT_API_KEY_FILE: '',
  NIGHTSHIFT_LOG_LEVEL: 'silent',
  NIGHTSHIFT_API_TIMEOUT_MS: '500',
};

describe('policy warnings and unset variables on the command line', () => {
  beforeAll(() => {
    assertBuilt();
  });

  const unset = () =>
    policyFile(`version: 1
jobs:
  drill:
    schedule: "0 3 * * 0"
    action: restore-drill
    with: { workgroup: ops, workspace: drill, backupId: "\${DRILL_TEST_UNSET_BACKUP}" }
    timeout: 2h
`);
  const UNSET_MESSAGE =
    'jobs.drill.with.backupId: environment variable DRILL_TEST_UNSET_BACKUP is not set (set it, or give a default: "${DRILL_TEST_UNSET_BACKUP:-default}")';

  it.each([
    ['start', (file: string) => ['start', file]],
    ['run --inline', (file: string) => ['run', file, 'drill', '--inline']],
    ['plan', (file: string) => ['plan', file]],
  ])('%s refuses a policy with an unset ${VAR}: exit 2, the problem as an error', async (_, args) => {
    const file = unset();
    const cli = startCli(args(file), { ...API, REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    expect(await cli.exited).toBe(2);
    // a service says too that it has no policy in force to run instead (Redis does not answer here)
    const refusal = `nightshift: ${file} is invalid and no policy is in force in Redis to run until it is fixed (a first start needs a valid file)\n`;
    expect(cli.output()).toBe(`${file}:6:57: ${UNSET_MESSAGE}\n${args(file)[0] === 'start' ? refusal : ''}`);
  });

  it('run and plan --job of one job resolve that job’s variables only: another job’s unset ${VAR} is a warning', async () => {
    const file = policyFile(`version: 1
jobs:
  evening:
    schedule: "0 19 * * 1-5"
    action: pause
    target: { workgroups: ["dev-*"] }
    retry: { attempts: 1 }
  drill:
    schedule: "0 3 * * 0"
    action: restore-drill
    with: { workgroup: ops, workspace: drill, backupId: "\${DRILL_TEST_UNSET_BACKUP}" }
    timeout: 2h
`);
    const warning = `${file}:11:57: warning: ${UNSET_MESSAGE}\n`;
    const run = startCli(['run', file, 'evening', '--inline', '--json'], API);
    // it gets as far as the API (nothing listens there): the run fails, it is not refused
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(warning);
    expect(run.output()).toContain('"reason": "could not list the fleet"');
    const plan = startCli(['plan', file, '--job', 'evening'], API);
    expect(await plan.exited).toBe(1);
    expect(plan.output()).toContain(warning);
    // the job that reads it still needs it, and so does a plan of every job
    for (const args of [
      ['run', file, 'drill', '--inline'],
      ['plan', file],
    ]) {
      const refused = startCli(args, API);
      expect(await refused.exited).toBe(2);
      expect(refused.output()).toContain(`${file}:11:57: ${UNSET_MESSAGE}\n`);
    }
  }, 60_000);

  it('validate only warns about it, and exits 0', async () => {
    const file = unset();
    const cli = startCli(['validate', file], API);
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toContain(`${file}:6:57: warning: ${UNSET_MESSAGE}\n`);
    expect(cli.output()).toContain(`${file}: valid, 1 job, 1 warning\n`);
  });

  it('run prints a warning of its policy on stderr and goes on with the run', async () => {
    const file = policyFile(`version: 1
jobs:
  evening:
    schedule: "* 19 * * 1-5"
    action: pause
    target: { workgroups: ["dev-*"] }
    retry: { attempts: 1 }
`);
    const cli = startCli(['run', file, 'evening', '--inline', '--json'], API);
    // it gets as far as the API (nothing listens there): the run fails, it is not refused
    expect(await cli.exited).toBe(1);
    expect(cli.output()).toContain(
      `${file}:4:15: warning: jobs.evening.schedule: "* 19 * * 1-5" fires every minute from 19:00 to 19:59; did you mean "0 19 * * 1-5"?\n`,
    );
    expect(cli.output()).toContain('"reason": "could not list the fleet"');
  });
});
