// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { systemClock } from '../../../src/time/index.js';
import { assertBuilt, type Engine, startCli, useEngineHarness } from '../../helpers/engine.js';
import { runSummary } from '../../helpers/summaries.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 2 });

/** What a scheduler might run: it reads a variable that the operator's shell running the CLI lacks. */
const HOOK = 'https://hooks.example.com/services/T0/B0/names-5ec2e7';
const POLICY = `version: 1
notifications:
  ops: { url: "\${OPS_HOOK}" }
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    notify: [ops]
  morning-resume:
    schedule: "30 7 * * *"
    action: resume
    target: { workgroups: ["*"] }
`;

/** The same jobs without variables, for commands that load the whole policy in the test's process. */
const PLAIN_POLICY = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-cli-names-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

interface Result {
  code: number | NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `nightshift <args>` against the engine's Redis and prefix, stdout and stderr kept apart. */
async function cli(engine: Engine, args: string[], extra: Record<string, string> = {}): Promise<Result> {
  const child = startCli(args, {
    REDIS_URL: harness.server.url,
    NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
    NIGHTSHIFT_LOG_LEVEL: 'warn',
    NIGHTSHIFT_LOG_FORMAT: 'json',
    OPS_HOOK: '',
    ...extra,
  });
  const code = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

/** An engine whose scheduler has loaded POLICY, as `nightshift scheduler` would have. */
async function withSchedulerPolicy(label: string): Promise<Engine> {
  const engine = harness.engine(label);
  const policy = engine.parse(POLICY.replace('${OPS_HOOK}', HOOK));
  await engine.scheduler().load(policy, POLICY);
  return engine;
}

describe('suspend and unsuspend check the name against the policy in force', () => {
  it('suspend of a name the policy the schedulers run lacks exits 2 with the closest job, and suspends nothing', async () => {
    const engine = await withSchedulerPolicy('names-suspend');
    const typo = await cli(engine, ['suspend', 'nightly-paus'], { OPS_HOOK: HOOK });
    expect(typo.code, typo.stderr).toBe(2);
    expect(typo.stderr).toContain('no job or window "nightly-paus" in the policy the schedulers run (sha ');
    expect(typo.stderr).toContain('did you mean "nightly-pause"?');
    expect(typo.stderr).toContain('--force');
    expect(typo.stdout).toBe('');
    expect(`${typo.stdout}${typo.stderr}`).not.toContain(HOOK);
    expect(await engine.suspensions.all()).toEqual(new Map());

    // OPS_HOOK unset here: the name check reads job names only
    const known = await cli(engine, ['suspend', 'nightly-pause', '--reason', 'freeze', '--by', 'ana']);
    expect(known.code, known.stderr).toBe(0);
    expect(known.stdout).toBe('suspended nightly-pause\n');
    expect(await engine.suspensions.get('nightly-pause')).toMatchObject({ reason: 'freeze', by: 'ana' });
  });

  it('suspend --json of an unknown name prints an error object with the suggestion on stdout', async () => {
    const engine = await withSchedulerPolicy('names-suspend-json');
    const typo = await cli(engine, ['suspend', 'morning-resum', '--json']);
    expect(typo.code).toBe(2);
    expect(JSON.parse(typo.stdout)).toEqual({
      error: 'unknown-job',
      message: expect.stringContaining('no job or window "morning-resum"'),
      suggestion: 'morning-resume',
    });
  });

  it('with no policy recorded, suspend refuses and says how to fix it; --policy FILE checks a file, --force suspends anyway', async () => {
    const engine = harness.engine('names-no-policy');
    const refused = await cli(engine, ['suspend', 'weekly-drill']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `no scheduler has recorded the policy it runs in this Redis under prefix "${engine.prefix}"`,
    );
    expect(refused.stderr).toContain('--policy FILE');
    expect(refused.stderr).toContain('--force');

    const file = write('no-policy.yaml', POLICY);
    const typo = await cli(engine, ['suspend', 'nightly-paus', '--policy', file]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(
      `no job or window "nightly-paus" in ${file}; did you mean "nightly-pause"?`,
    );
    expect(await engine.suspensions.all()).toEqual(new Map());

    const forced = await cli(engine, ['suspend', 'weekly-drill', '--force', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toEqual({ job: 'weekly-drill', suspended: true, changed: true });
    expect(forced.stderr).toContain('warning: "weekly-drill" not checked against any policy');
    expect(await engine.suspensions.get('weekly-drill')).toBeDefined();
  });

  it('unsuspend: a suspended name always goes, a policy job that was not suspended exits 0, anything else exits 2', async () => {
    const engine = await withSchedulerPolicy('names-unsuspend');
    await engine.suspensions.suspend('nightly-pause');
    await engine.suspensions.suspend('retired-job'); // since removed from the policy

    const typo = await cli(engine, ['unsuspend', 'nightly-paus']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(
      '"nightly-paus" is not suspended, and no job or window "nightly-paus" in the policy',
    );
    expect(typo.stderr).toContain('did you mean "nightly-pause"?');
    expect(typo.stderr).toContain('(suspended: nightly-pause, retired-job)');
    expect(await engine.suspensions.get('nightly-pause')).toBeDefined();

    expect((await cli(engine, ['unsuspend', 'retired-job'])).stdout).toBe('unsuspended retired-job\n');
    const notSuspended = await cli(engine, ['unsuspend', 'morning-resume', '--json']);
    expect(notSuspended.code).toBe(0);
    expect(JSON.parse(notSuspended.stdout)).toEqual({
      job: 'morning-resume',
      suspended: false,
      changed: false,
    });
  });
});

describe('the policy in force', () => {
  it("a scheduler's load records the policy's sha, when and where; the last load wins", async () => {
    const engine = harness.engine('names-current');
    expect(await engine.policies.current()).toBeUndefined();
    const first = engine.scheduler({
      clock: { ...systemClock, now: () => Date.parse('2026-03-27T12:00:00Z') },
    });
    await first.load(engine.parse(PLAIN_POLICY), PLAIN_POLICY);
    expect(await engine.policies.current()).toEqual({
      sha: first.policySha,
      loadedAt: '2026-03-27T12:00:00.000Z',
      host: expect.any(String),
      text: PLAIN_POLICY,
      stored: { text: PLAIN_POLICY, verdict: 'signed' },
    });
    const second = engine.scheduler();
    const changed = `${PLAIN_POLICY}# edited\n`;
    await second.load(engine.parse(changed), changed);
    expect((await engine.policies.current())?.text).toBe(changed);
  });
});

describe('history --job', () => {
  it('a name in no policy and without runs exits 2 with the closest job that has runs', async () => {
    const engine = await withSchedulerPolicy('names-history');
    await engine.history.record({
      ...runSummary({ job: 'weekly-audit' }),
      finishedAt: new Date().toISOString(),
    });
    const typo = await cli(engine, ['history', '--job', 'weekly-audt']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(
      'no runs of "weekly-audt" kept, and no job or window "weekly-audt" in the policy',
    );
    expect(typo.stderr).toContain('did you mean "weekly-audit"?');

    const json = await cli(engine, ['history', '--job', 'weekly-audt', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: 'unknown-job', suggestion: 'weekly-audit' });
  });

  it('a job of the policy in force without runs is said to have none kept, exit 0', async () => {
    const engine = await withSchedulerPolicy('names-history-none');
    const none = await cli(engine, ['history', '--job', 'morning-resume']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(
      /^no runs of "morning-resume" kept: it is a job of the policy the schedulers run/,
    );
    const json = await cli(engine, ['history', '--job', 'morning-resume', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  it("shows why a run failed: its first failed target's error and how many more failed", async () => {
    const engine = harness.engine('names-history-reason');
    const failed: RunSummary = {
      ...runSummary({ job: 'nightly-pause', succeeded: 1, failed: 2 }),
      finishedAt: new Date().toISOString(),
    };
    await engine.history.record(failed);
    const table = await cli(engine, ['history']);
    expect(table.code, table.stderr).toBe(0);
    const [header, row] = table.stdout.split('\n');
    expect(header).toMatch(/RUN ID +REASON$/);
    expect(row?.endsWith('dev-core/ws100: Internal-Error: boom; 1 more target(s) failed')).toBe(true);
    expect(row).toMatch(new RegExp(`${failed.runId} +dev-core/ws100`));
  });
});

describe('run of a suspended job', () => {
  it('says the job is suspended, since when, by whom and why, and runs it (queued and --inline)', async () => {
    const engine = harness.engine('names-run-suspended');
    engine.worker(harness.sim.url);
    await engine.suspensions.suspend('nightly-pause', { reason: 'release freeze', by: 'ana' });
    const since = (await engine.suspensions.get('nightly-pause'))?.since;
    const file = write('run-suspended.yaml', PLAIN_POLICY);
    const note = `note: job "nightly-pause" is suspended since ${since} by ana: release freeze. A suspension stops its schedule, not a manual run: this run goes ahead`;

    const queued = await cli(engine, ['run', file, 'nightly-pause', '--json', '--quiet']);
    expect(queued.code, queued.stderr).toBe(0);
    expect(queued.stderr).toContain(note);
    expect(JSON.parse(queued.stdout)).toMatchObject({
      job: 'nightly-pause',
      trigger: 'manual',
      outcome: 'succeeded',
    });

    const inline = await cli(engine, ['run', file, 'nightly-pause', '--inline', '--json', '--quiet'], {
      NIGHTSHIFT_API_URL: harness.sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    });
    expect(inline.code, inline.stderr).toBe(0);
    expect(inline.stderr).toContain(note);
    expect(JSON.parse(inline.stdout)).toMatchObject({ job: 'nightly-pause', outcome: 'succeeded' });
  });
});
