import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/runs/index.js';
import { DEFAULT_API_KEY, type SimState, seedState } from '../../../src/sim/index.js';
import { workspaceStatusFields } from '../../../src/sim/status.js';
import { READ_ONLY_OPERATIONS, useActionSim, workspacesIn } from '../../helpers/actions.js';
import { assertBuilt, Engine, eventually, startCli } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';

/** The cost-saving routine: the morning resume undoes only what the evening pause did. */
const POLICY = `version: 1
targets:
  dev: { workgroups: ["dev-alpha"] }
jobs:
  evening-pause:
    schedule: "0 20 * * *"
    action: pause
    target: dev
  morning-resume:
    schedule: "30 7 * * *"
    action: resume
    target: dev
    with: { waitReady: 10s, onlyPausedBy: evening-pause }
`;

type Workspace = SimState['workspaces'][number];

/** dev-alpha: three Active workspaces and two someone keeps Stopped on purpose (prod-core beside it). */
function fleet(): SimState {
  const state = seedState({ seed: 5, fleet: { workgroups: 2, workspacesPerWorkgroup: 5 } });
  const statuses = ['Active', 'Active', 'Active', 'Stopped', 'Stopped'] as const;
  for (const [i, ws] of workspacesIn(state, 'dev-alpha').entries())
    Object.assign(ws, workspaceStatusFields(statuses[i] ?? 'Active'));
  return state;
}

/** Each target as `outcome` or `outcome: reason`, by workspace id. */
const outcomes = (summary: RunSummary) =>
  Object.fromEntries(
    summary.targets.map((t) => [t.workspaceId, t.reason ? `${t.outcome}: ${t.reason}` : t.outcome]),
  );

/** `outcome` for each of `workspaces`, by workspace id. */
const each = (workspaces: readonly Workspace[], outcome: string) =>
  Object.fromEntries(workspaces.map((ws) => [ws.workspace_id, outcome]));

describe('resume with onlyPausedBy', () => {
  const harness = useActionSim(fleet, { transitionMs: 100 });
  let redis: TestRedis;
  let engine: Engine | undefined;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });
  afterAll(async () => {
    await redis?.stop();
  });

  const devAlpha = () => workspacesIn(harness.sim.state, 'dev-alpha');
  /** The three Active workspaces the pause will pause, and the two kept Stopped. */
  const groups = () => {
    const all = devAlpha();
    return { active: all.slice(0, 3), keptStopped: all.slice(3) };
  };
  const startEngine = () => {
    engine = new Engine(redis.url, 'paused-by');
    engine.worker(harness.sim.url);
    return engine;
  };
  /** The simulator's requests after `since` that change something. */
  const mutatingSince = (since: number) =>
    harness.sim
      .requests()
      .filter((entry) => entry.seq > since && !READ_ONLY_OPERATIONS.has(entry.operation ?? entry.path));

  /** Runs the evening pause through the worker, and waits until what it paused is Stopped. */
  async function pauseInTheEvening(running: Engine): Promise<RunSummary> {
    const pause = await running.waitForRun(await running.enqueue(POLICY, 'evening-pause'));
    await eventually('the paused workspaces Stopped', () =>
      devAlpha().every((ws) => ws.status === 'Stopped'),
    );
    return pause;
  }

  it('resumes exactly the workspaces the pause job’s last run paused, and skips the ones kept Stopped with the reason', async () => {
    const running = startEngine();
    const { active, keptStopped } = groups();
    const pause = await pauseInTheEvening(running);
    expect(pause).toMatchObject({ outcome: 'succeeded', counts: { total: 5, succeeded: 3, skipped: 2 } });

    const since = harness.sim.requests().at(-1)?.seq ?? 0;
    const resume = await running.waitForRun(await running.enqueue(POLICY, 'morning-resume'), 20_000);

    expect(resume.outcome).toBe('succeeded');
    expect(outcomes(resume)).toEqual({
      ...each(active, 'succeeded'),
      ...each(
        keptStopped,
        `skipped: not paused by evening-pause (its last run, ${pause.runId}, did not pause it)`,
      ),
    });
    expect(resume.evidence).toMatchObject({
      onlyPausedBy: { job: 'evening-pause', runId: pause.runId, paused: 3 },
    });
    const resumed = mutatingSince(since).map((entry) => [entry.operation, entry.path.split('/').at(-2)]);
    expect(resumed.sort()).toEqual(active.map((ws) => ['resumeWorkspace', ws.workspace_id]).sort());
    expect(devAlpha().map((ws) => ws.status)).toEqual(['Active', 'Active', 'Active', 'Stopped', 'Stopped']);
  });

  it('with no run of the pause job in the history, skips every workspace with the reason, resumes nothing and succeeds', async () => {
    const running = startEngine();
    const since = harness.sim.requests().at(-1)?.seq ?? 0;
    const resume = await running.waitForRun(await running.enqueue(POLICY, 'morning-resume'));

    expect(resume.outcome).toBe('succeeded');
    expect(outcomes(resume)).toEqual(
      each(
        devAlpha(),
        'skipped: not paused by evening-pause (the run history has no succeeded or partial run of it)',
      ),
    );
    expect(mutatingSince(since)).toEqual([]);
    expect(devAlpha().map((ws) => ws.status)).toEqual(['Active', 'Active', 'Active', 'Stopped', 'Stopped']);
  });

  describe('from the command line', () => {
    let file: string;
    let env: Record<string, string>;
    beforeAll(() => {
      assertBuilt('src/cli/inline-run.ts', 'src/cli/runtime.ts', 'jobs/resume.ts');
      file = join(mkdtempSync(join(tmpdir(), 'nightshift-paused-by-')), 'policy.yaml');
      writeFileSync(file, POLICY);
      env = {
        NIGHTSHIFT_API_URL: harness.sim.url,
        NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
        // stdout holds the JSON alone
        NIGHTSHIFT_LOG_LEVEL: 'silent',
      };
    });

    it('plan reads the run history in Redis and plans only the workspaces the pause paused, with read-only calls', async () => {
      const running = startEngine();
      const { active, keptStopped } = groups();
      const pause = await pauseInTheEvening(running);

      const since = harness.sim.requests().at(-1)?.seq ?? 0;
      const cli = startCli(['plan', file, '--job', 'morning-resume', '--json'], {
        ...env,
        REDIS_URL: redis.url,
        NIGHTSHIFT_REDIS_PREFIX: running.prefix,
      });
      expect(await cli.exited, cli.output()).toBe(0);
      const [plan] = JSON.parse(cli.output()) as RunSummary[];

      expect(plan).toMatchObject({ job: 'morning-resume', dryRun: true, outcome: 'succeeded' });
      expect(outcomes(plan as RunSummary)).toEqual({
        ...each(active, 'planned: would resume (Stopped)'),
        ...each(
          keptStopped,
          `skipped: not paused by evening-pause (its last run, ${pause.runId}, did not pause it)`,
        ),
      });
      expect(mutatingSince(since)).toEqual([]);
      expect(devAlpha().every((ws) => ws.status === 'Stopped')).toBe(true);
    });

    it('run --inline without REDIS_URL fails with the reason before touching any workspace', async () => {
      const since = harness.sim.requests().at(-1)?.seq ?? 0;
      const cli = startCli(['run', file, 'morning-resume', '--inline', '--json'], { ...env, REDIS_URL: '' });
      expect(await cli.exited, cli.output()).toBe(1);
      const summary = JSON.parse(cli.output()) as RunSummary;

      expect(summary).toMatchObject({
        outcome: 'failed',
        reason: 'onlyPausedBy needs the run history in Redis: set REDIS_URL, or run it through a worker',
        counts: { total: 0 },
        targets: [],
      });
      expect(mutatingSince(since)).toEqual([]);
      expect(devAlpha().map((ws) => ws.status)).toEqual(['Active', 'Active', 'Active', 'Stopped', 'Stopped']);
    });
  });
});
