import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/index.js';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { RedisRateLimiter } from '../../../src/store/rate-limiter.js';
import { createRedis } from '../../../src/store/redis.js';
import { busiestSecond, useEngineHarness } from '../../helpers/engine.js';

const harness = useEngineHarness({ workgroups: 4, workspacesPerWorkgroup: 10 });

const RATE = 20;
const BURST = 5;

const policy = `version: 1
jobs:
  pause-first:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["prod-core", "dev-alpha"] }
    concurrency: 20
  pause-second:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["staging-eu", "ops"] }
    concurrency: 20
`;

const closers: (() => Promise<unknown>)[] = [];
/** When each call, in either worker, was let through by the shared bucket. */
const permits: number[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A client whose every call first takes a token from the bucket all workers share in Redis. */
function limitedClient(redisUrl: string, prefix: string, apiUrl: string): ApiClient {
  const redis = createRedis({ url: redisUrl, role: 'limiter' });
  const limiter = new RedisRateLimiter(redis, { name: 'api', ratePerSecond: RATE, burst: BURST, prefix });
  const api = new ApiClient({
    baseUrl: apiUrl,
    apiKey: DEFAULT_API_KEY,
    beforeCall: async (_operation, signal) => {
      await limiter.acquire(signal);
      permits.push(Date.now());
    },
  });
  closers.push(async () => {
    await api.close();
    await redis.quit();
  });
  return api;
}

describe('API rate limit shared through Redis', () => {
  it('two workers running at the same time together stay under the configured requests per second', async () => {
    const engine = harness.engine('rate-limit');
    const since = harness.sim.requests().at(-1)?.seq ?? 0;
    for (const _ of [1, 2]) {
      engine.worker(harness.sim.url, {
        api: limitedClient(harness.server.url, engine.prefix, harness.sim.url),
        concurrency: 1,
      });
    }
    const started = Date.now();
    const [first, second] = [
      await engine.enqueue(policy, 'pause-first'),
      await engine.enqueue(policy, 'pause-second'),
    ];
    const runs = await Promise.all([engine.waitForRun(first, 30_000), engine.waitForRun(second, 30_000)]);
    const elapsed = Date.now() - started;

    for (const run of runs) expect(run.outcome).toBe('succeeded');
    // each run was on its own worker, and they overlapped in time
    const [a, b] = runs.map((run) => [
      Date.parse(run.startedAt as string),
      Date.parse(run.finishedAt as string),
    ]);
    expect(Math.max(a?.[0] ?? 0, b?.[0] ?? 0)).toBeLessThan(Math.min(a?.[1] ?? 0, b?.[1] ?? 0));

    const calls = harness.sim
      .requests()
      .filter((entry) => entry.seq > since && entry.operation !== null)
      .map((entry) => Date.parse(entry.time))
      .sort((x, y) => x - y);
    // two listings plus one pause per Active workspace of the 4 workgroups
    expect(calls.length).toBe(2 + 40);
    expect(permits).toHaveLength(calls.length);
    expect(busiestSecond(permits.sort((x, y) => x - y))).toBeLessThanOrEqual(RATE + BURST);
    // 42 calls, 5 of them from the saved-up burst, at 20 per second: at least 1.85 s
    expect(elapsed).toBeGreaterThanOrEqual(((calls.length - BURST) / RATE) * 1000 - 100);
  });
});
