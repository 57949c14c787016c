// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import {
  checkPolicy,
  formatProblem,
  hideSecrets,
  PolicyError,
  type PolicyJob,
  parsePolicy,
  type RunParameters,
} from '../../../src/policy/index.js';

const POLICY = `version: 1
jobs:
  drill:
    schedule: "0 6 * * 6"
    action: restore-drill
    timeout: 2h
    with:
      workgroup: ops
      workspace: drill
      backupId: "\${DRILL_BACKUP_ID}"
      waitReady: 45m
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["dev-*"] }
windows:
  office:
    uptime: "Mon-Fri 08:00-18:00"
    target: { workgroups: ["dev-*"] }
`;

const ENV = { DRILL_BACKUP_ID: 'bk-from-env', DRILL_TOKEN: 'tok-9Hd2Kq7w', PLAIN_ID: 'bk-plain' };

function drill(values: RunParameters, env: Record<string, string> = ENV, job = 'drill'): PolicyJob {
  const policy = parsePolicy(POLICY, 'policy.yaml', {
    registry: actionRegistry,
    env,
    parameters: { job, values },
  });
  return policy.jobs.find((candidate) => candidate.name === job) as PolicyJob;
}

/** The problems of a run with these parameters, each as `file:line:col: message`. */
function refusals(values: RunParameters, job = 'drill'): string[] {
  const { problems, policy } = checkPolicy(POLICY, 'policy.yaml', {
    registry: actionRegistry,
    env: ENV,
    only: job,
    parameters: { job, values },
  });
  expect(policy).toBeUndefined();
  return problems.map(formatProblem);
}

describe('run parameters (run --with key=value)', () => {
  it("replace the job's value of the same key, read from the policy's environment otherwise", () => {
    expect(drill({}).params.backupId).toBe('bk-from-env');
    expect(drill({ backupId: 'bk-given' }).params.backupId).toBe('bk-given');
    expect(drill({ backupId: 'bk-given' }).params.workspace).toBe('drill');
  });

  it('make a variable the job no longer reads no problem when it is unset', () => {
    const { problems, policy } = checkPolicy(POLICY, 'policy.yaml', {
      registry: actionRegistry,
      env: {},
      only: 'drill',
      parameters: { job: 'drill', values: { backupId: 'bk-given' } },
    });
    expect(problems).toEqual([]);
    expect(policy?.jobs.find((job) => job.name === 'drill')?.params.backupId).toBe('bk-given');
  });

  it('are read as YAML reads a value after its key: durations, maps and numbers as the schema wants them', () => {
    const job = drill({
      waitReady: '10m',
      expect: '{ vertices: 5, edges: { min: 2 } }',
      afterwards: 'leave',
    });
    expect(job.params).toMatchObject({
      waitReady: 600_000,
      expect: { vertices: 5, edges: { min: 2 } },
      afterwards: 'leave',
    });
  });

  it('keep a value the schema wants as text as typed, though YAML would read a number or true', () => {
    expect(drill({ backupId: '123' }).params.backupId).toBe('123');
    expect(drill({ backupId: 'true' }).params.backupId).toBe('true');
  });

  it('read a value YAML cannot read as text, so the schema says what is wrong with it', () => {
    expect(refusals({ workspace: '*' })).toEqual([
      expect.stringMatching(/^policy\.yaml:3:3: --with workspace=\*: name one workspace exactly/),
    ]);
  });

  it('resolve a ${VAR} where the policy is read, a secret one hidden as the policy hides its own', () => {
    const job = drill({ backupId: '${DRILL_TOKEN}', workspace: '${PLAIN_ID}' });
    expect(job.params.backupId).toBe('tok-9Hd2Kq7w');
    expect(job.params.workspace).toBe('bk-plain');
    const hide = hideSecrets(job.secrets);
    expect(hide(job.params)).toMatchObject({ backupId: '${DRILL_TOKEN}', workspace: 'bk-plain' });
  });

  it('refuse a key the action does not take, at the job, naming the parameter and the closest key', () => {
    expect(refusals({ backupid: 'bk-1' })).toEqual([
      'policy.yaml:3:3: --with backupid=bk-1: action "restore-drill" has no parameter "backupid"; did you mean "backupId"? (its parameters: workgroup, workspace, backupId, expect, waitReady, afterwards)',
    ]);
  });

  it('refuse a value the action refuses, as the file would be refused for it', () => {
    expect(refusals({ waitReady: 'soon', workspace: 'dev-*' })).toEqual([
      expect.stringMatching(/^policy\.yaml:3:3: --with waitReady=soon: .*duration/),
      expect.stringMatching(/^policy\.yaml:3:3: --with workspace=dev-\*: name one workspace exactly/),
    ]);
    expect(refusals({ expect: '{ vertices: many }' })).toEqual([
      expect.stringMatching(/^policy\.yaml:3:3: --with expect=\{ vertices: many \}: vertices: /),
    ]);
  });

  it('refuse a ${VAR} that is not set, naming the variable and never a value', () => {
    expect(refusals({ backupId: '${NO_SUCH_ID}' })).toEqual([
      expect.stringMatching(
        /^policy\.yaml:3:3: --with backupId=\$\{NO_SUCH_ID\}: environment variable NO_SUCH_ID is not set/,
      ),
    ]);
  });

  it('refuse parameters for a window, whose reconciliation takes none', () => {
    expect(refusals({ backupId: 'bk-1' }, 'office')).toEqual([
      'policy.yaml:17:3: --with: window "office" takes no parameters',
    ]);
  });

  it('refuse a key for an action that takes no parameters', () => {
    expect(refusals({ force: 'true' }, 'nightly-pause')).toEqual([
      'policy.yaml:12:3: --with force=true: action "pause" takes no parameters',
    ]);
  });

  it('are checked again wherever the policy is parsed: a worker refuses a bad value as the CLI does', () => {
    expect(() => drill({ waitReady: 'soon' })).toThrow(PolicyError);
  });
});
