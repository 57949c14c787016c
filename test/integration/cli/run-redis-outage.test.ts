import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { assertBuilt, Engine, eventually, startCli } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis?.stop();
});

describe('a queued run whose Redis stays down', () => {
  it('`run` waits the outage out no longer than the job’s timeout, then exits 1 naming Redis', async () => {
    assertBuilt();
    const engine = new Engine(redis.url, 'run-outage');
    const file = join(mkdtempSync(join(tmpdir(), 'nightshift-run-outage-')), 'policy.yaml');
    writeFileSync(
      file,
      `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    timeout: 3s
`,
    );
    try {
      // no worker: the run stays queued, and `run` waits for it
      const run = startCli(['run', file, 'nightly-pause', '--quiet'], {
        REDIS_URL: redis.url,
        NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
        NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
        NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
        NIGHTSHIFT_LOG_LEVEL: '',
        NIGHTSHIFT_LOG_FORMAT: 'json',
      });
      await eventually('the run queued', async () => (await engine.queue.getWaitingCount()) === 1);
      await redis.kill();
      const killedAt = Date.now();
      expect(await run.exited, run.output()).toBe(1);
      const waited = Date.now() - killedAt;
      expect(waited).toBeGreaterThanOrEqual(3_000);
      expect(waited).toBeLessThan(15_000);
      expect(run.stderr()).toContain('Redis did not answer; still waiting for the run');
      expect(run.stderr()).toMatch(/nightshift: Redis at redis:\/\/127\.0\.0\.1:\d+\/? did not answer/);
    } finally {
      await redis.restart();
      await engine.close();
    }
  }, 40_000);
});
