// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import type { PolicyCommandDeps } from '../../../src/cli/policy-io.js';
import { buildProgram } from '../../../src/cli/program.js';
import { MAX_POLICY_BYTES, POLICY_SCHEMA_PATH } from '../../../src/policy/index.js';
import { testEnv, testRegistry } from '../../fixtures/policies/test-registry.js';

interface Run {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | undefined;
  readonly error: CommanderError | undefined;
}

/** Runs the CLI in-process with a fixed clock, capturing output and the exit code. */
async function run(...args: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  let exitCode: number | undefined;
  const deps: Partial<PolicyCommandDeps> = {
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
  };
  const output = {
    writeOut: (text: string) => {
      stdout += text;
    },
    writeErr: (text: string) => {
      stderr += text;
    },
  };
  const program = buildProgram(deps).configureOutput(output);
  for (const command of program.commands) command.configureOutput(output);
  let error: CommanderError | undefined;
  try {
    await program.parseAsync(['node', 'nightshift', ...args]);
  } catch (caught) {
    if (!(caught instanceof CommanderError)) throw caught;
    error = caught;
  }
  return { stdout, stderr, exitCode, error };
}

const directory = mkdtempSync(join(tmpdir(), 'nightshift-cli-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(directory, name);
  writeFileSync(file, text);
  return file;
}

const POLICY = write(
  'policy.yaml',
  `version: 1
calendars:
  holidays: [2026-03-30]
targets:
  dev:
    workgroups: ["dev-*"]
jobs:
  nightly-pause:
    description: Pause dev after hours
    schedule: "30 2 * * *"
    timezone: Europe/Berlin
    action: pause
    target: dev
    skip: [holidays]
  sydney:
    schedule: "0 19 * * *"
    timezone: Australia/Sydney
    action: pause
    target: { workgroups: ["apac-*"] }
    dryRun: true
  drill:
    schedule: "0 3 * * 0"
    action: drill
    with: { workgroup: ops, workspace: drill, backupId: "\${DRILL_BACKUP_ID}" }
  parked:
    schedule: "0 1 * * *"
    action: resume
    target: dev
    suspend: true
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

describe('nightshift validate', () => {
  it('exits 0 and prints one aligned line per job: action, target, next firing in its zone', async () => {
    const result = await run('validate', POLICY);
    expect(result.exitCode).toBeUndefined();
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        `${POLICY}: valid, 4 jobs`,
        'JOB            ACTION  TARGET          NEXT FIRING                TIME ZONE         NOTES',
        'nightly-pause  pause   dev             2026-03-28T02:30:00+01:00  Europe/Berlin     Pause dev after hours',
        'sydney         pause   inline(apac-*)  2026-03-28T19:00:00+11:00  Australia/Sydney  dry run',
        'drill          drill   -               2026-03-29T03:00:00+00:00  UTC',
        'parked         resume  dev             suspended                  UTC',
        '',
      ].join('\n'),
    );
  });

  it('exits 2 and prints every problem as file:line:col: message on stderr', async () => {
    const result = await run('validate', BROKEN);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      [
        `${BROKEN}:4:5: jobs.a: unknown key "schedul"; did you mean "schedule"?`,
        `${BROKEN}:5:13: jobs.a.action: unknown action "pase"; did you mean "pause"? (valid actions: allow-list-audit, check-ip, cloud-provider-report, create-db-user, delete-backup, delete-database, disable-allow-list, drill, inventory, lockdown, org-user-review, pause, purge, restore-drill, resume, rotate-db-password, update-cloud-provider, upgrade-cloud-provider)`,
        '',
      ].join('\n'),
    );
  });

  it('checks every file given, reporting the bad ones and summarising the good ones', async () => {
    const result = await run('validate', BROKEN, POLICY);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${BROKEN}:4:5:`);
    expect(result.stdout).toContain(`${POLICY}: valid, 4 jobs`);
  });

  const UNSET_VARIABLE = write(
    'unset-variable.yaml',
    `version: 1
jobs:
  drill:
    schedule: "0 3 * * 0"
    action: drill
    with: { workgroup: ops, workspace: drill, backupId: "\${DRILL_BACKUP_IDD}" }
`,
  );

  it('treats an unset ${VAR} as a warning with a did-you-mean from the environment, exits 0 and lists the jobs', async () => {
    const result = await run('validate', UNSET_VARIABLE);
    expect(result.exitCode).toBeUndefined();
    expect(result.stderr).toBe(
      `${UNSET_VARIABLE}:6:57: warning: jobs.drill.with.backupId: environment variable DRILL_BACKUP_IDD is not set; did you mean "DRILL_BACKUP_ID"? (set it, or give a default: "\${DRILL_BACKUP_IDD:-default}")\n`,
    );
    expect(result.stdout).toBe(
      [
        `${UNSET_VARIABLE}: valid, 1 job, 1 warning`,
        'JOB    ACTION  TARGET  NEXT FIRING                TIME ZONE  NOTES',
        'drill  drill   -       2026-03-29T03:00:00+00:00  UTC',
        '',
      ].join('\n'),
    );
  });

  it('shows unknown for a schedule from an unset ${VAR}, and lists no jobs when one cannot be read without it', async () => {
    const schedule = `version: 1
jobs:
  a:
    schedule: "\${UNSET_CRON}"
    action: pause
    target: { workgroups: ["dev-*"] }
`;
    const listed = await run('validate', write('unset-cron.yaml', schedule));
    expect(listed.exitCode).toBeUndefined();
    expect(listed.stdout).toMatch(/\na +pause +inline\(dev-\*\) +unknown +UTC\n$/);
    const unlisted = write(
      'unset-action.yaml',
      `${schedule}  b:\n    schedule: "0 1 * * *"\n    action: "\${UNSET_ACTION}"\n`,
    );
    const result = await run('validate', unlisted);
    expect(result.exitCode).toBeUndefined();
    expect(result.stdout).toBe(
      `${unlisted}: valid as far as it can be checked without its unset variables, 2 warnings\n`,
    );
  });

  it('warns of a window uptime from an unset ${VAR} at its place and exits 0, listing no jobs (no crash)', async () => {
    const file = write(
      'unset-uptime.yaml',
      `version: 1
windows:
  office:
    target: { workgroups: ["dev-*"] }
    uptime: "\${UNSET_UPTIME}"
`,
    );
    const result = await run('validate', file);
    expect(result.exitCode).toBeUndefined();
    expect(result.stderr).toBe(
      `${file}:5:13: warning: windows.office.uptime: environment variable UNSET_UPTIME is not set (set it, or give a default: "\${UNSET_UPTIME:-default}")\n`,
    );
    expect(result.stdout).toBe(
      `${file}: valid as far as it can be checked without its unset variables, 1 warning\n`,
    );
  });

  it('--strict-env makes an unset ${VAR} an error and exits 2', async () => {
    const result = await run('validate', '--strict-env', UNSET_VARIABLE);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      new RegExp(
        `^${UNSET_VARIABLE}:6:57: jobs\\.drill\\.with\\.backupId: environment variable DRILL_BACKUP_IDD is not set;`,
      ),
    );
  });

  it('prints a warning as file:line:col: warning: message and still exits 0', async () => {
    const file = write(
      'every-minute.yaml',
      `version: 1
jobs:
  evening:
    schedule: "* 19 * * 1-5"
    action: pause
    target: { workgroups: ["dev-*"] }
`,
    );
    const result = await run('validate', file);
    expect(result.exitCode).toBeUndefined();
    expect(result.stderr).toBe(
      `${file}:4:15: warning: jobs.evening.schedule: "* 19 * * 1-5" fires every minute from 19:00 to 19:59; did you mean "0 19 * * 1-5"?\n`,
    );
    expect(result.stdout).toMatch(new RegExp(`^${file}: valid, 1 job, 1 warning\n`));
  });

  it.each([
    [
      'binary garbage',
      Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0xff]),
      'is not text (it holds NUL bytes)',
    ],
    ['Latin-1', Buffer.from('version: 1\njobs: {}\n# caf\u00e9\n', 'latin1'), 'is not UTF-8 text'],
    [
      'UTF-16',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('version: 1\n', 'utf16le')]),
      'is UTF-16 text',
    ],
  ])('refuses a file of %s at 1:1, saying it is not UTF-8 text, and exits 2', async (_, bytes, what) => {
    const file = join(directory, 'not-text.yaml');
    writeFileSync(file, bytes);
    const result = await run('validate', file);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(
      `${file}:1:1: the file ${what}: a policy is a YAML file in UTF-8${what === 'is UTF-16 text' ? '; save it as UTF-8' : ''}\n`,
    );
  });

  it('refuses a policy file over 5 MB before reading it, naming the limit, and exits 2', async () => {
    const file = join(directory, 'huge.yaml');
    writeFileSync(file, `version: 1\njobs: {}\n${'#'.repeat(MAX_POLICY_BYTES)}\n`);
    const result = await run('validate', file);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(
      `${file}:1:1: the policy file is 5242901 bytes, over the limit of 5 MB (5242880 bytes)\n`,
    );
  });

  it('reports a file that cannot be read at 1:1 and exits 2', async () => {
    const missing = join(directory, 'nope.yaml');
    const result = await run('validate', missing);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^${missing}:1:1: cannot read the policy file: ENOENT`));
  });
});

describe('nightshift next', () => {
  it('--json prints N firings per job as { job, at, local }, sorted by at, skipped dates left out', async () => {
    const result = await run('next', POLICY, '--json', '--count', '2', '--from', '2026-03-28T12:00:00Z');
    expect(result.exitCode).toBeUndefined();
    expect(JSON.parse(result.stdout)).toEqual(
      [
        { job: 'sydney', at: '2026-03-29T08:00:00Z', local: '2026-03-29T19:00:00+11:00' },
        { job: 'nightly-pause', at: '2026-03-29T01:00:00Z', local: '2026-03-29T03:00:00+02:00' },
        { job: 'drill', at: '2026-03-29T03:00:00Z', local: '2026-03-29T03:00:00+00:00' },
        { job: 'sydney', at: '2026-03-30T08:00:00Z', local: '2026-03-30T19:00:00+11:00' },
        { job: 'nightly-pause', at: '2026-03-31T00:30:00Z', local: '2026-03-31T02:30:00+02:00' },
        { job: 'drill', at: '2026-04-05T03:00:00Z', local: '2026-04-05T03:00:00+00:00' },
      ].sort((a, b) => a.at.localeCompare(b.at)),
    );
  });

  it('--job limits the list to one job; without --from it counts from now', async () => {
    const result = await run('next', POLICY, '--json', '--job', 'nightly-pause', '--count', '1');
    expect(JSON.parse(result.stdout)).toEqual([
      { job: 'nightly-pause', at: '2026-03-28T01:30:00Z', local: '2026-03-28T02:30:00+01:00' },
    ]);
  });

  it('prints an aligned table by default and names suspended jobs it leaves out', async () => {
    const result = await run('next', POLICY, '--count', '1', '--from', '2026-03-28T12:00:00Z');
    expect(result.stdout).toBe(
      [
        'AT (UTC)              LOCAL                      JOB',
        '2026-03-29T01:00:00Z  2026-03-29T03:00:00+02:00  nightly-pause',
        '2026-03-29T03:00:00Z  2026-03-29T03:00:00+00:00  drill',
        '2026-03-29T08:00:00Z  2026-03-29T19:00:00+11:00  sydney',
        'suspended, not listed: parked',
        '',
      ].join('\n'),
    );
  });

  it('refuses an unknown --job with a suggestion, exit code 2', async () => {
    const result = await run('next', POLICY, '--job', 'nightly-paus');
    expect(result.error?.exitCode).toBe(2);
    expect(result.stderr).toContain('error: unknown job "nightly-paus"; did you mean "nightly-pause"?');
  });

  it.each([
    [['--count', '0'], 'expected a whole number from 1 to 1000'],
    [['--count', 'ten'], 'expected a whole number from 1 to 1000'],
    [['--from', '2026-03-28T12:00:00'], 'with Z or an offset'],
    [['--from', 'tomorrow'], 'with Z or an offset'],
  ])('refuses %j as bad usage', async (args, message) => {
    const result = await run('next', POLICY, ...args);
    expect(result.error).toBeInstanceOf(CommanderError);
    expect(result.stderr).toContain(message);
  });

  it('prints the problems and exits 2 for an invalid policy', async () => {
    const result = await run('next', BROKEN);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${BROKEN}:4:5: jobs.a: unknown key "schedul"`);
    expect(result.stdout).toBe('');
  });
});

describe('nightshift schema', () => {
  it('prints the JSON Schema committed for editors', async () => {
    let stdout = '';
    const program = buildProgram({ stdout: (text) => (stdout += text) });
    await program.parseAsync(['node', 'nightshift', 'schema']);
    const committed = readFileSync(new URL(`../../../${POLICY_SCHEMA_PATH}`, import.meta.url), 'utf8');
    expect(JSON.parse(stdout)).toEqual(JSON.parse(committed));
  });
});
