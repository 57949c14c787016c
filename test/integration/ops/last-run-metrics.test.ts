import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { Metrics } from '../../../src/ops/index.js';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { RunHistory } from '../../../src/store/history.js';
import { createRedis } from '../../../src/store/redis.js';
import { assertBuilt, captureLog, eventually, useEngineHarness } from '../../helpers/engine.js';
import { startTestRedis } from '../../helpers/redis.js';
import { runSummary } from '../../helpers/summaries.js';
import { parseExposition, sampleValue } from './exposition.js';
import { IDLE_POLICY, killGroup, logLines, signalGroup, startService } from './service-group.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 2 });

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-last-run-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A run of `job` with `outcome` that finished `agoMs` ago. */
function finished(job: string, outcome: RunSummary['outcome'], agoMs: number, dryRun = false): RunSummary {
  return { ...runSummary({ job, outcome, dryRun }), finishedAt: new Date(Date.now() - agoMs).toISOString() };
}

const seconds = (summary: RunSummary) => Date.parse(summary.finishedAt as string) / 1000;

async function scrape(metrics: Metrics) {
  return parseExposition((await metrics.scrape()).body);
}

describe('last-run timestamps from the run history', () => {
  it('report the newest run per job and outcome, and the newest success, to a process that saw none of them', async () => {
    const engine = harness.engine('last-runs');
    const success = finished('nightly-pause', 'succeeded', 3 * 3_600_000);
    const failure = finished('nightly-pause', 'failed', 3_600_000);
    const skipped = finished('nightly-pause', 'skipped', 1_800_000);
    const audit = finished('audit', 'partial', 600_000);
    for (const summary of [success, failure, skipped, audit]) await engine.history.record(summary);
    // recorded late, but older: a run that finished earlier never moves a timestamp back
    await engine.history.record(finished('nightly-pause', 'succeeded', 5 * 3_600_000));
    // a dry run acted on nothing: it is no success of the job
    await engine.history.record(finished('nightly-pause', 'succeeded', 60_000, true));

    // a process started afresh, on a Redis client of its own
    const redis = createRedis({ url: harness.server.url, role: 'test' });
    try {
      const metrics = new Metrics({
        history: new RunHistory(redis, { prefix: engine.prefix }),
        processMetrics: false,
      });
      const samples = await scrape(metrics);
      expect(
        sampleValue(samples, 'nightshift_job_last_success_timestamp_seconds', { job: 'nightly-pause' }),
      ).toBe(seconds(success));
      expect(
        sampleValue(samples, 'nightshift_job_last_success_timestamp_seconds', { job: 'audit' }),
      ).toBeUndefined();
      const lastRun = (job: string, outcome: string) =>
        sampleValue(samples, 'nightshift_job_last_run_timestamp_seconds', { job, outcome });
      expect(lastRun('nightly-pause', 'succeeded')).toBe(seconds(success));
      expect(lastRun('nightly-pause', 'failed')).toBe(seconds(failure));
      expect(lastRun('nightly-pause', 'skipped')).toBe(seconds(skipped));
      expect(lastRun('audit', 'partial')).toBe(seconds(audit));
      expect(
        samples.filter((sample) => sample.name === 'nightshift_job_last_run_timestamp_seconds'),
      ).toHaveLength(4);
    } finally {
      redis.disconnect();
    }
  });

  it('forget a job whose newest run is older than the retention, as the history forgets its runs', async () => {
    const engine = harness.engine('last-runs-retention');
    const redis = createRedis({ url: harness.server.url, role: 'test' });
    try {
      const history = new RunHistory(redis, { prefix: engine.prefix, retention: { maxAgeMs: 86_400_000 } });
      await history.record(finished('gone-job', 'succeeded', 2 * 3_600_000));
      await history.record(finished('kept-job', 'succeeded', 3_600_000));
      const shorter = new RunHistory(redis, { prefix: engine.prefix, retention: { maxAgeMs: 90 * 60_000 } });
      expect((await shorter.lastRuns()).map((run) => run.job)).toEqual(['kept-job']);
      expect(await redis.hkeys(engine.keys.lastRuns)).toEqual([JSON.stringify(['kept-job', 'succeeded'])]);
    } finally {
      redis.disconnect();
    }
  });

  it('leave the gauges empty within the timeout while Redis does not answer, logged once per outage', async () => {
    const own = await startTestRedis();
    const redis = createRedis({ url: own.url, role: 'test' });
    const { log, lines } = captureLog('debug');
    try {
      const metrics = new Metrics({
        history: new RunHistory(redis, { prefix: 'last-runs-down' }),
        queueTimeoutMs: 300,
        processMetrics: false,
        log,
      });
      await own.stop();
      for (let scrapes = 0; scrapes < 2; scrapes++) {
        const started = Date.now();
        const samples = await scrape(metrics);
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(sampleValue(samples, 'nightshift_job_last_run_timestamp_seconds')).toBeUndefined();
      }
      const warnings = lines.filter((line) => line.msg === 'run history not read: scrape goes on without it');
      expect(warnings.map((line) => line.level)).toEqual([40, 20]);
    } finally {
      redis.disconnect();
      await own.stop();
    }
  });

  it('survive a restart: a worker runs the job, and the scheduler started after it reports the success', async () => {
    const engine = harness.engine('last-runs-cli');
    const env = {
      REDIS_URL: harness.server.url,
      NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
      NIGHTSHIFT_API_URL: harness.sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_LOG_FORMAT: 'json',
      NIGHTSHIFT_POLL_INTERVAL_MS: '100',
    };
    const worker = startService(['worker'], env);
    let scheduler: ReturnType<typeof startService> | undefined;
    try {
      const run = await engine.waitForRun(await engine.enqueue(IDLE_POLICY, 'evening-pause'));
      expect(run.outcome).toBe('succeeded');
      expect((await signalGroup(worker, 'SIGTERM', 15_000)).exit).toBe(0);

      const file = join(dir, 'policy.yaml');
      writeFileSync(file, IDLE_POLICY);
      scheduler = startService(['scheduler', file], env);
      const listening = await eventually(
        'the ops server',
        () =>
          logLines(scheduler as ReturnType<typeof startService>).find(
            (line) => line.msg === 'ops server listening',
          ),
        15_000,
      );
      const samples = parseExposition(await (await fetch(`${listening.address}/metrics`)).text());
      expect(
        sampleValue(samples, 'nightshift_job_last_success_timestamp_seconds', { job: 'evening-pause' }),
      ).toBe(seconds(run));
      // the counter is this process's own, and this one ran nothing
      expect(sampleValue(samples, 'nightshift_runs_total', { job: 'evening-pause' })).toBeUndefined();
      expect((await signalGroup(scheduler, 'SIGTERM', 15_000)).exit).toBe(0);
    } finally {
      killGroup(worker);
      killGroup(scheduler);
    }
  }, 60_000);
});
