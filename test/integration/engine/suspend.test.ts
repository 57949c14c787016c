import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { assertBuilt, type Engine, eventually, startCli, useEngineHarness } from '../../helpers/engine.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 2 });

const policy = (suspend: boolean) => `version: 1
jobs:
  nightly:
    schedule: "* * * * * *"
    action: pause
    target: { workgroups: ["*"] }
    dryRun: true${suspend ? '\n    suspend: true' : ''}
`;

/** The job's recorded ticks, oldest first. */
async function recorded(engine: Engine): Promise<RunSummary[]> {
  const runs = await engine.history.list({ job: 'nightly', limit: 100 });
  return runs.sort((a, b) => (a.scheduledAt as string).localeCompare(b.scheduledAt as string));
}

/** Waits until `count` recorded ticks match `predicate`. */
function ticksWhere(engine: Engine, count: number, predicate: (run: RunSummary) => boolean) {
  return eventually(`${count} matching ticks`, async () => {
    const runs = (await recorded(engine)).filter(predicate);
    return runs.length >= count && runs;
  });
}

const skipped = (run: RunSummary) => run.outcome === 'skipped';
const ran = (run: RunSummary) => run.outcome === 'succeeded';

describe('suspend', () => {
  it('a job suspended through Suspensions has its ticks recorded as skipped, and runs again once unsuspended', async () => {
    const engine = harness.engine('suspend');
    engine.worker(harness.sim.url);
    await engine.suspensions.suspend('nightly', { reason: 'change freeze', by: 'ops' });
    const since = (await engine.suspensions.get('nightly'))?.since;
    const text = policy(false);
    const scheduler = engine.scheduler();
    await scheduler.load(engine.parse(text), text);
    await scheduler.start();

    await ticksWhere(engine, 2, skipped);
    await engine.suspensions.unsuspend('nightly');
    const unsuspendedAt = Date.now();
    await ticksWhere(engine, 1, ran);
    await scheduler.stop();

    const runs = await recorded(engine);
    for (const run of runs.filter(skipped)) {
      expect(run.reason).toBe(`skipped: suspended since ${since} (change freeze)`);
      expect(Date.parse(run.scheduledAt as string)).toBeLessThan(unsuspendedAt);
      expect(await engine.queue.getJob(run.runId)).toBeUndefined();
    }
    for (const run of runs.filter(ran)) {
      expect(Date.parse(run.scheduledAt as string)).toBeGreaterThan(unsuspendedAt - 1000);
    }
    // every tick is either one or the other, and suspended ticks come before the runs
    expect(runs.map((run) => run.outcome)).toEqual([
      ...runs.filter(skipped).map(() => 'skipped'),
      ...runs.filter(ran).map(() => 'succeeded'),
    ]);
  });

  it('a job with suspend: true in the policy has its ticks recorded as skipped until a policy without it loads', async () => {
    const engine = harness.engine('suspend-policy');
    engine.worker(harness.sim.url);
    const scheduler = engine.scheduler();
    const suspended = policy(true);
    await scheduler.load(engine.parse(suspended), suspended);
    await scheduler.start();

    await ticksWhere(engine, 2, skipped);
    const active = policy(false);
    await scheduler.load(engine.parse(active), active);
    const reloadedAt = Date.now();
    await ticksWhere(engine, 1, ran);
    await scheduler.stop();

    const runs = await recorded(engine);
    for (const run of runs.filter(skipped)) {
      expect(run.reason).toBe('skipped: suspended in the policy');
      expect(Date.parse(run.scheduledAt as string)).toBeLessThan(reloadedAt);
    }
    expect(runs.map((run) => run.outcome)).toEqual([
      ...runs.filter(skipped).map(() => 'skipped'),
      ...runs.filter(ran).map(() => 'succeeded'),
    ]);
  });
});

describe('suspensions in the CLI', () => {
  it('next leaves out a job suspended with "nightshift suspend" and says since when, by whom and why', async () => {
    assertBuilt();
    const engine = harness.engine('suspend-next');
    const dir = mkdtempSync(join(tmpdir(), 'nightshift-next-'));
    const file = join(dir, 'policy.yaml');
    writeFileSync(
      file,
      `version: 1
jobs:
  nightly:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
  morning:
    schedule: "0 7 * * *"
    action: resume
    target: { workgroups: ["*"] }
`,
    );
    const env = { REDIS_URL: harness.server.url, NIGHTSHIFT_REDIS_PREFIX: engine.prefix };
    const suspend = startCli(
      ['suspend', 'nightly', '--policy', file, '--reason', 'change freeze', '--by', 'ops'],
      env,
    );
    expect(await suspend.exited).toBe(0);

    const next = startCli(['next', file, '--count', '1'], env);
    expect(await next.exited).toBe(0);
    const since = (await engine.suspensions.get('nightly'))?.since;
    expect(next.output()).toContain('  morning\n');
    expect(next.output()).not.toMatch(/ {2}nightly\n/);
    expect(next.output()).toContain(
      `suspended, not listed: nightly (suspended since ${since} by ops: change freeze)`,
    );

    const unreachable = startCli(['next', file, '--count', '1'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(await unreachable.exited).toBe(0);
    expect(unreachable.output()).toContain(
      'warning: could not read suspensions from Redis (redis://127.0.0.1:1',
    );
    expect(unreachable.output()).toMatch(/ {2}nightly\n/);
  });
});
