// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUILTIN_DEFAULTS,
  checkPolicy,
  formatProblem,
  jobProblem,
  loadPolicyFile,
  MAX_POLICY_BYTES,
  type Policy,
  PolicyError,
  type PolicyJob,
  parsePolicy,
} from '../../../src/policy/index.js';
import { MAX_ALIAS_VALUES } from '../../../src/policy/yaml/index.js';
import { DRILL_BACKUP, SECRET_VALUES, testEnv, testRegistry } from '../../fixtures/policies/test-registry.js';

function load(text: string, env = testEnv): Policy {
  return parsePolicy(text, 'policy.yaml', { registry: testRegistry, env });
}

function problems(text: string, env = testEnv): string[] {
  try {
    load(text, env);
  } catch (error) {
    if (error instanceof PolicyError)
      return error.problems.map((problem) => `${problem.line}:${problem.col}: ${problem.message}`);
    throw error;
  }
  throw new Error('the policy was accepted');
}

function job(policy: Policy, name: string): PolicyJob {
  const found = policy.jobs.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no job ${name}`);
  return found;
}

const BASE = `version: 1
targets:
  dev:
    workgroups: ["dev-*"]
jobs:
`;

describe('the issue’s example policy', () => {
  const registry = testRegistry;
  const text = `version: 1
defaults:
  timezone: Europe/Berlin        # IANA name; default UTC
  retry: { attempts: 5, backoff: 10s }
  concurrency: 16                # parallel API calls within one run
calendars:
  holidays-de: [2026-12-24, 2026-12-25, 2026-12-31]
targets:
  dev:
    workgroups: ["dev-*"]        # names or ids, globs
    workspaces: ["*"]
    exclude: ["dev-core/*"]      # workgroup/workspace globs
jobs:
  nightly-pause:
    schedule: "0 20 * * 1-5"     # 5 fields, or 6 with seconds
    action: pause
    target: dev                  # a name from targets, or an inline selector
    skip: [holidays-de]
  weekly-restore-drill:
    schedule: "0 3 * * 0"
    timezone: UTC
    action: restore-drill
    with: { workgroup: ops, workspace: drill, backupId: "\${DRILL_BACKUP_ID}" }
`;
  const policy = parsePolicy(text, 'example.yaml', { registry, env: testEnv });

  it('loads with every job’s settings resolved', () => {
    expect(job(policy, 'nightly-pause')).toMatchObject({
      action: 'pause',
      timezone: 'Europe/Berlin',
      schedule: { cron: '0 20 * * 1-5', timezone: 'Europe/Berlin', kind: 'fixed' },
      target: {
        name: 'dev',
        selector: { workgroups: ['dev-*'], workspaces: ['*'], exclude: ['dev-core/*'] },
      },
      skip: ['holidays-de'],
      retry: { attempts: 5, backoff: 10_000, strategy: 'exponential' },
      timeout: 30 * 60_000,
      concurrency: 16,
      overlap: 'skip',
      catchUp: null,
      dryRun: false,
      confirm: false,
      suspend: false,
    });
    expect([...job(policy, 'nightly-pause').skipDates]).toEqual(['2026-12-24', '2026-12-25', '2026-12-31']);
  });

  it('reads ${VAR} from the environment; a backup id’s variable is no secret', () => {
    const drill = job(policy, 'weekly-restore-drill');
    expect(drill.timezone).toBe('UTC');
    expect(drill.target).toBeUndefined();
    expect(drill.params).toEqual({ workgroup: 'ops', workspace: 'drill', backupId: DRILL_BACKUP });
    expect(policy.secrets).toEqual([]);
    expect(drill.secrets).toBe(policy.secrets);
  });

  it('keeps each job’s place in the file', () => {
    expect(job(policy, 'nightly-pause').location).toEqual({ file: 'example.yaml', line: 14, col: 3 });
    expect(job(policy, 'weekly-restore-drill').location).toEqual({ file: 'example.yaml', line: 19, col: 3 });
    expect(policy.locate(['jobs', 'nightly-pause', 'schedule'])).toEqual({
      file: 'example.yaml',
      line: 15,
      col: 15,
    });
  });

  it('lists jobs in file order', () => {
    expect(policy.jobs.map((entry) => entry.name)).toEqual(['nightly-pause', 'weekly-restore-drill']);
  });
});

describe('defaults and inheritance', () => {
  it('gives a job with nothing set the built-in defaults', () => {
    const policy = load(`${BASE}  a:\n    schedule: "0 1 * * *"\n    action: pause\n    target: dev\n`);
    const { timezone, retry, timeout, concurrency, overlap, catchUp, notify } = job(policy, 'a');
    expect({ timezone, retry, timeout, concurrency, overlap, catchUp, notify }).toEqual(BUILTIN_DEFAULTS);
    expect(policy.defaults).toEqual(BUILTIN_DEFAULTS);
  });

  it('lets a job override defaults, and merges retry field by field', () => {
    const policy = load(`version: 1
defaults:
  timezone: America/New_York
  retry: { attempts: 7, backoff: 1m, strategy: fixed }
  timeout: 1h
  overlap: queue
  catchUp: 2h
targets:
  dev:
    workgroups: ["dev-*"]
jobs:
  inherits:
    schedule: "0 1 * * *"
    action: pause
    target: dev
  overrides:
    schedule: "0 1 * * *"
    action: pause
    target: dev
    timezone: Asia/Kolkata
    retry: { attempts: 2 }
    timeout: 90s
    overlap: allow
    catchUp: none
    concurrency: 4
`);
    expect(job(policy, 'inherits')).toMatchObject({
      timezone: 'America/New_York',
      retry: { attempts: 7, backoff: 60_000, strategy: 'fixed' },
      timeout: 3_600_000,
      overlap: 'queue',
      catchUp: 7_200_000,
      concurrency: 16,
    });
    expect(job(policy, 'overrides')).toMatchObject({
      timezone: 'Asia/Kolkata',
      retry: { attempts: 2, backoff: 60_000, strategy: 'fixed' },
      timeout: 90_000,
      overlap: 'allow',
      catchUp: null,
      concurrency: 4,
    });
  });

  it('keeps a time zone as written, even one ICU calls by an older name (Asia/Kolkata)', () => {
    const policy = load(
      `${BASE}  a:\n    schedule: "0 1 * * *"\n    action: pause\n    target: dev\n    timezone: Asia/Kolkata\n`,
    );
    expect(job(policy, 'a').schedule.timezone).toBe('Asia/Kolkata');
  });

  it('fills in the defaults of inline selectors and notifications', () => {
    const policy = load(`version: 1
notifications:
  ops: { url: "\${OPS_WEBHOOK}" }
jobs:
  a:
    schedule: "0 1 * * *"
    action: pause
    target: { workgroups: ["qa-*"] }
    notify: [ops]
    maxTargets: "12.5%"
    dryRun: true
`);
    expect(job(policy, 'a')).toMatchObject({
      target: { name: undefined, selector: { workgroups: ['qa-*'], workspaces: ['*'], exclude: [] } },
      notify: ['ops'],
      maxTargets: { percent: 12.5 },
      dryRun: true,
    });
    expect(policy.notifications.ops).toEqual({
      url: SECRET_VALUES[0],
      format: 'json',
      on: ['failure', 'partial', 'halted', 'cancelled', 'approval-needed', 'overdue', 'stranded', 'acted'],
      timeout: 10_000,
    });
  });

  it('reads a notification sink as written, and lets defaults carry notify to every job', () => {
    const policy = load(`version: 1
defaults:
  notify: [ops]
notifications:
  ops: { url: "\${OPS_WEBHOOK}", format: slack, on: [findings, recovered], timeout: 1m }
  audit: { url: "https://hooks.example.com/audit" }
jobs:
  a: { schedule: "0 1 * * *", action: pause, target: { workgroups: ["qa-*"] } }
  b: { schedule: "0 1 * * *", action: pause, target: { workgroups: ["qa-*"] }, notify: [audit, ops] }
  c: { schedule: "0 1 * * *", action: pause, target: { workgroups: ["qa-*"] }, notify: [] }
`);
    expect(policy.notifications.ops).toEqual({
      url: SECRET_VALUES[0],
      format: 'slack',
      on: ['findings', 'recovered'],
      timeout: 60_000,
    });
    expect(policy.jobs.map((each) => each.notify)).toEqual([['ops'], ['audit', 'ops'], []]);
  });

  it('reads maxTargets as a count', () => {
    const policy = load(
      `${BASE}  a:\n    schedule: "0 1 * * *"\n    action: pause\n    target: dev\n    maxTargets: 20\n`,
    );
    expect(job(policy, 'a').maxTargets).toEqual({ count: 20 });
  });
});

describe('YAML features', () => {
  // Kept inline: as files they would fail the repository's YAML lint.
  it('reports a YAML syntax error at the place the parser found it, and checks nothing else', () => {
    expect(problems('version: 1\ntargets:\n  dev:\n    workgroups: ["dev-*"\njobs: {}\n')).toEqual([
      '5:1: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
    expect(problems('version: 1\njobs:\n\tnightly:\n\t  action: pause\n')).toEqual([
      '3:1: invalid YAML: Tabs are not allowed as indentation',
      '4:1: invalid YAML: Tabs are not allowed as indentation',
    ]);
  });

  it('resolves anchors, aliases and merge keys, with the job’s own keys winning', () => {
    const policy = load(`version: 1
targets:
  dev: &dev
    workgroups: ["dev-*"]
  dev-copy: *dev
jobs:
  base: &base
    schedule: "0 1 * * *"
    action: pause
    target: dev
    timeout: 5m
  derived:
    <<: *base
    timeout: 10m
    schedule: "0 2 * * *"
`);
    expect(policy.targets['dev-copy']).toEqual(policy.targets.dev);
    expect(job(policy, 'derived')).toMatchObject({
      schedule: { cron: '0 2 * * *' },
      timeout: 600_000,
      action: 'pause',
    });
  });

  it('points at the anchor when a merged key is wrong', () => {
    expect(
      problems(`version: 1
templates: &t
  schedule: "0 1 * * *"
  overlap: sometimes
jobs:
  a:
    <<: *t
    action: pause
    target: { workgroups: ["x"] }
`),
    ).toEqual([
      '2:1: unknown key "templates" (expected one of: version, defaults, calendars, targets, notifications, jobs, windows, pricing, secrets)',
      '4:12: jobs.a.overlap: expected one of: skip, queue, allow',
    ]);
  });

  it('reports an alias that refers to its own ancestor instead of expanding it forever', () => {
    expect(problems('version: 1\njobs: &j\n  a: *j\n')).toContain(
      '3:6: jobs.a.a: alias "*j" refers to a node that contains it',
    );
  });

  it('refuses an alias bomb at the alias that would copy past the budget, at its place', () => {
    const levels = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]'];
    for (let level = 1; level < 8; level += 1) {
      const previous = String.fromCharCode(96 + level);
      const name = String.fromCharCode(97 + level);
      levels.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(', ')}]`);
    }
    const reported = problems(
      `version: 1\nbomb:\n${levels.map((line) => `  ${line}`).join('\n')}\njobs: {}\n`,
    );
    expect(reported).toContain(
      `8:22: bomb.f[3]: alias "*e" copies 111111 values, past the ${MAX_ALIAS_VALUES} that aliases may add to a policy (an alias bomb?)`,
    );
  });
});

describe('interpolation', () => {
  it('uses a default when the variable is unset or empty, and keeps $${ as a literal ${', () => {
    const policy = load(`version: 1
jobs:
  d:
    schedule: "0 3 * * 0"
    action: drill
    description: "costs $\${HOURS} hours"
    with: { workgroup: "\${WG:-ops}", workspace: "\${EMPTY:-drill}", backupId: "b-\${DRILL_BACKUP_ID}" }
`);
    const drill = job(policy, 'd');
    expect(drill.description).toBe('costs ${HOURS} hours');
    expect(drill.params).toEqual({ workgroup: 'ops', workspace: 'drill', backupId: `b-${DRILL_BACKUP}` });
  });

  it('shows a wrong value from the environment and where it came from, unless it is a secret', () => {
    const wrong = (variable: string) =>
      problems(`${BASE}  a:\n    schedule: "\${${variable}}"\n    action: pause\n    target: dev\n`);
    expect(wrong('DRILL_BACKUP_ID')).toEqual([
      `7:15: jobs.a.schedule: invalid cron expression "${DRILL_BACKUP}" (from "\${DRILL_BACKUP_ID}"): expected 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, found 1`,
    ]);
    const [secret] = wrong('ACTION_SECRET');
    expect(secret).toContain('invalid cron expression from "${ACTION_SECRET}"');
    expect(secret).not.toContain(SECRET_VALUES[1]);
  });

  it('with only, needs that job’s variables and the shared sections’: another job’s unset one is a warning', () => {
    const text = `version: 1
calendars:
  holidays: ["\${HOLIDAY}"]
jobs:
  rotate:
    schedule: "0 3 1 * *"
    action: pause
    target: { workgroups: ["\${TEAM:-dev}-*"] }
  drill:
    schedule: "0 3 * * 0"
    action: drill
    with: { workgroup: ops, workspace: drill, backupId: "\${UNSET_BACKUP}" }
  odd:
    schedule: "0 3 * * 0"
    action: "\${UNSET_ACTION}"
`;
    const check = (only: string, env: Record<string, string> = { HOLIDAY: '2026-12-24' }) =>
      checkPolicy(text, 'p.yaml', { registry: testRegistry, env, only });
    const rotate = check('rotate');
    expect(rotate.problems.map((problem) => [problem.line, problem.severity])).toEqual([
      [12, 'warning'],
      [15, 'warning'],
    ]);
    // the job that cannot be read without its variable is left out; the one to run is there
    expect(rotate.policy?.jobs.map((candidate) => candidate.name)).toEqual(['rotate', 'drill']);
    expect(check('drill').problems.map((problem) => [problem.line, problem.severity])).toEqual([
      [12, undefined],
      [15, 'warning'],
    ]);
    expect(check('drill').policy).toBeUndefined();
    // the calendar is shared: every job needs it
    const [calendar] = check('rotate', {}).problems;
    expect([calendar?.line, calendar?.severity]).toEqual([3, undefined]);
  });
});

describe('actions', () => {
  it('accepts a destructive action with confirm: true', () => {
    const policy = load(
      `${BASE}  p:\n    schedule: "0 4 * * 0"\n    action: purge\n    target: dev\n    confirm: true\n`,
    );
    expect(job(policy, 'p').confirm).toBe(true);
  });

  it('accepts a workgroup action with a target', () => {
    expect(
      load(`${BASE}  l:\n    schedule: "0 4 * * 0"\n    action: lockdown\n    target: dev\n`).jobs,
    ).toHaveLength(1);
  });

  it('reports a parameter given twice as a duplicate key', () => {
    expect(
      problems(`version: 1
jobs:
  d:
    schedule: "0 3 * * 0"
    action: drill
    with:
      workgroup: ops
      workspace: drill
      backupId: b-1
      workgroup: ops2
`),
    ).toEqual(['10:7: duplicate key "workgroup" (first defined on line 7)']);
  });

  it('validates with: of every job, not only the first one that fails', () => {
    expect(
      problems(`version: 1
jobs:
  a:
    schedule: "0 3 * * 0"
    action: drill
    with: { workgroup: ops, workspace: drill, backupId: b-1, extra: 1 }
  b:
    schedule: "0 3 * * 0"
    action: drill
    with: { workgroup: ops, workspace: drill, backupId: 7 }
`),
    ).toEqual([
      '6:62: jobs.a.with: unknown key "extra" (expected one of: workgroup, workspace, backupId, keepHours)',
      '10:57: jobs.b.with.backupId: expected a string, got an integer',
    ]);
  });
});

describe('PolicyError', () => {
  it('lists problems in file order in its message, with code NS_POLICY_INVALID', () => {
    try {
      load(`version: 3\njobs:\n  a:\n    schedule: "0 1 * *"\n    action: pause\n    target: dev\n`);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(PolicyError);
      const policyError = error as PolicyError;
      expect(policyError.code).toBe('NS_POLICY_INVALID');
      expect(policyError.message).toBe(
        [
          'invalid policy (3 problems):',
          'policy.yaml:1:10: version: unsupported version 3; the supported version is 1',
          'policy.yaml:4:15: jobs.a.schedule: invalid cron expression "0 1 * *": expected 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, found 4',
          'policy.yaml:6:13: jobs.a.target: unknown target "dev"; no targets are defined under "targets:"',
        ].join('\n'),
      );
    }
  });

  it('builds a problem at a job’s name for later stages, e.g. a run refused by maxTargets', () => {
    const policy = load(
      `${BASE}  a:\n    schedule: "0 1 * * *"\n    action: pause\n    target: dev\n    maxTargets: 2\n`,
    );
    expect(formatProblem(jobProblem(job(policy, 'a'), 'refused: 9 targets, maxTargets is 2'))).toBe(
      'policy.yaml:6:3: refused: 9 targets, maxTargets is 2',
    );
  });
});

describe('loadPolicyFile', () => {
  const directory = mkdtempSync(join(tmpdir(), 'nightshift-policy-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('reads and validates a file, naming it in problems', async () => {
    const file = join(directory, 'bad.yaml');
    writeFileSync(file, 'version: 1\njobs:\n  a:\n    action: pause\n');
    await expect(loadPolicyFile(file, { registry: testRegistry, env: {} })).rejects.toMatchObject({
      problems: [
        { file, line: 3, col: 3, message: 'jobs.a: missing required key "schedule"' },
        {
          file,
          line: 3,
          col: 3,
          message:
            'jobs.a: action "pause" acts on workspaces: add "target:" with a name from targets or a selector',
        },
      ],
    });
  });

  it('turns an unreadable file into a PolicyError at 1:1', async () => {
    const file = join(directory, 'missing.yaml');
    const error = await loadPolicyFile(file, { registry: testRegistry, env: {} }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).problems[0]).toMatchObject({ file, line: 1, col: 1 });
    expect((error as PolicyError).problems[0]?.message).toMatch(/^cannot read the policy file: ENOENT/);
  });

  it('refuses policy text over 5 MB however it arrives (a reload, a worker), before parsing it', () => {
    const text = `version: 1\njobs: {}\n${'#'.repeat(MAX_POLICY_BYTES)}\n`;
    expect(problems(text)).toEqual([
      `1:1: the policy file is ${MAX_POLICY_BYTES + 21} bytes, over the limit of 5 MB (5242880 bytes)`,
    ]);
    expect(load(`version: 1\njobs: {}\n${'#'.repeat(MAX_POLICY_BYTES - 100)}\n`).jobs).toEqual([]);
  });
});
