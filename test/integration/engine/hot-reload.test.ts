import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSchedulerRole } from '../../../src/cli/commands/scheduler.js';
import type { RedisRuntime } from '../../../src/cli/runtime.js';
import { loadSettings } from '../../../src/config/index.js';
import { Approvals, AuditTrail, RunCancellations } from '../../../src/store/index.js';
import { Engine, eventually } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';

let server: TestRedis;
let engine: Engine | undefined;
let dir: string | undefined;
let stopScheduler: (() => Promise<void>) | undefined;

beforeAll(async () => {
  server = await startTestRedis();
});

afterEach(async () => {
  await stopScheduler?.();
  stopScheduler = undefined;
  await engine?.close();
  engine = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

afterAll(async () => {
  await server?.stop();
});

const ERROR = 50;

function policy(...jobs: string[]): string {
  return `version: 1
jobs:
${jobs
  .map(
    (name) => `  ${name}:
    schedule: "* * * * * *"
    action: pause
    target: { workgroups: ["*"] }
`,
  )
  .join('')}`;
}

/**
 * When the scheduler put each tick of `job` on the queue (no worker takes them). Ticks are
 * handed over ahead of their instant, so this is what a reload can still change.
 */
async function enqueued(engine: Engine, job: string): Promise<number[]> {
  const jobs = await engine.queue.getJobs(['waiting']);
  return jobs.filter((entry) => entry.data.job === job).map((entry) => entry.timestamp);
}

/** The scheduler role as `nightshift scheduler` wires it, on the engine's Redis. */
function runtime(engine: Engine): RedisRuntime {
  return {
    redis: engine.redis,
    stores: engine.redis,
    prefix: engine.prefix,
    history: engine.history,
    suspensions: engine.suspensions,
    policies: engine.policies,
    checkpoints: engine.checkpoints,
    queue: engine.queue,
    state: engine.state,
    runStarts: engine.runStarts,
    cancellations: new RunCancellations(engine.redis, { prefix: engine.prefix }),
    audit: new AuditTrail(engine.redis, { prefix: engine.prefix }),
    approvals: new Approvals(engine.redis, { prefix: engine.prefix }),
    close: async () => {},
  };
}

describe('hot reload of the policy file', () => {
  it('keeps the last good schedule when the file turns invalid, and logs why; a valid file adds and removes jobs', async () => {
    engine = new Engine(server.url, 'hot-reload');
    dir = await mkdtemp(join(tmpdir(), 'nightshift-reload-'));
    const file = join(dir, 'policy.yaml');
    await writeFile(file, policy('alpha'));
    stopScheduler = await startSchedulerRole(loadSettings({}), file, runtime(engine), engine.log);
    const current = engine;
    await eventually('alpha ticking', async () => (await enqueued(current, 'alpha')).length >= 1);

    // an edit in place that breaks the file
    await writeFile(file, policy('alpha').replace('"* * * * * *"', '"61 * * * * *"'));
    const refused = await eventually('the invalid policy logged', () =>
      current.lines('new policy is invalid; keeping the last good one').at(0),
    );
    expect(refused.level).toBe(ERROR);
    expect(refused.problems).toEqual([expect.stringMatching(/jobs\.alpha\.schedule/)]);
    const before = (await enqueued(current, 'alpha')).length;
    await eventually('alpha still ticking', async () => (await enqueued(current, 'alpha')).length > before);

    // a valid file, replaced whole as editors and config maps do
    await writeFile(`${file}.tmp`, policy('beta', 'gamma'));
    await rename(`${file}.tmp`, file);
    const loaded = await eventually('the new policy loaded', () =>
      current.lines('policy loaded').find((line) => (line.added as string[]).length > 0 && line.jobs === 2),
    );
    // the log line is written after the new schedule took over
    const reloadedAt = Date.parse(loaded.time as string);
    expect(loaded).toMatchObject({ added: ['beta', 'gamma'], removed: ['alpha'] });
    await eventually('beta and gamma ticking', async () => {
      const [beta, gamma] = await Promise.all([enqueued(current, 'beta'), enqueued(current, 'gamma')]);
      return beta.length > 0 && gamma.length > 0;
    });
    expect((await enqueued(current, 'alpha')).filter((at) => at > reloadedAt)).toEqual([]);
    // the runs of the new jobs carry the new policy, which the workers can fetch
    const [run] = (await current.queue.getJobs(['waiting'])).filter((entry) => entry.data.job === 'beta');
    expect(await current.policies.get(run?.data.policySha ?? '')).toBe(policy('beta', 'gamma'));
  });

  it('reloads on SIGHUP, even when the file reads as before (a config map swapped under a symlink)', async () => {
    engine = new Engine(server.url, 'hot-reload-hup');
    dir = await mkdtemp(join(tmpdir(), 'nightshift-reload-'));
    const file = join(dir, 'policy.yaml');
    await writeFile(file, policy('alpha'));
    stopScheduler = await startSchedulerRole(loadSettings({}), file, runtime(engine), engine.log);
    const current = engine;
    expect(current.lines('policy loaded')).toHaveLength(1);

    process.emit('SIGHUP', 'SIGHUP');
    const reloaded = await eventually('the policy loaded again', () => current.lines('policy loaded').at(1));
    expect(reloaded).toMatchObject({ jobs: 1, added: [], removed: [] });
    expect(reloaded.policySha).toBe(current.lines('policy loaded')[0]?.policySha);
  });
});
