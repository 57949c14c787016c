import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, type RequestLogEntry } from '../../../src/sim/index.js';
import { redisKeys } from '../../../src/store/keys.js';
import { assertBuilt, busiestSecond, startCli, useEngineHarness } from '../../helpers/engine.js';
import { uniquePrefix } from '../../helpers/redis.js';

// 10 workgroups of 2: a pause makes 1 + 20 calls; a plan of both jobs 2 listings, and per
// workgroup its allow-list and the current IP: 22
const harness = useEngineHarness({ workgroups: 10, workspacesPerWorkgroup: 2 });

const POLICY = `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
  audit:
    schedule: "0 6 * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
`;

let file: string;
beforeAll(() => {
  assertBuilt();
  file = join(mkdtempSync(join(tmpdir(), 'nightshift-rate-')), 'policy.yaml');
  writeFileSync(file, POLICY);
});
beforeEach(() => harness.sim.reset());

/** The API calls the simulator answered after `since`, read from its request log over HTTP. */
async function callsSince(since: number): Promise<number[]> {
  const response = await fetch(`${harness.sim.url}/_sim/requests?since=${since}`);
  const entries = (await response.json()) as RequestLogEntry[];
  return entries
    .filter((entry) => entry.operation !== null)
    .map((entry) => Date.parse(entry.time))
    .sort((a, b) => a - b);
}

/**
 * Runs the CLI with the rate limit and returns the times of its calls. A bucket of `rate` tokens
 * (the burst) serves the first calls at once and the rest at `rate` a second.
 */
async function limitedCalls(args: string[], rate: number, env: Record<string, string> = {}) {
  const since = harness.sim.requests().at(-1)?.seq ?? 0;
  const cli = startCli(args, {
    NIGHTSHIFT_API_URL: harness.sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_API_RATE_LIMIT: String(rate),
    NIGHTSHIFT_LOG_LEVEL: 'warn',
    REDIS_URL: '',
    ...env,
  });
  const code = await cli.exited;
  const times = await callsSince(since);
  return { code, output: cli.output(), times, spanMs: (times.at(-1) ?? 0) - (times[0] ?? 0) };
}

describe('NIGHTSHIFT_API_RATE_LIMIT in this process (run --inline, plan)', () => {
  it('run --inline without Redis stays under the limit: 21 calls at 5 a second take 3.2 s at least', async () => {
    const { code, output, times, spanMs } = await limitedCalls(
      ['run', file, 'fleet-pause', '--inline', '--json'],
      5,
    );
    expect(code, output).toBe(0);
    expect(times).toHaveLength(21);
    expect(busiestSecond(times)).toBeLessThanOrEqual(5 + 5);
    expect(spanMs).toBeGreaterThanOrEqual(((21 - 5) / 5) * 1000 - 100);
  });

  it('plan without Redis stays under the limit too: 22 read-only calls at 5 a second take 3.4 s at least', async () => {
    const { code, output, times, spanMs } = await limitedCalls(['plan', file, '--json'], 5);
    expect(code, output).toBe(3); // the audit finds the seeded fleet's wide allow-lists
    expect(times).toHaveLength(22);
    expect(busiestSecond(times)).toBeLessThanOrEqual(5 + 5);
    expect(spanMs).toBeGreaterThanOrEqual(((22 - 5) / 5) * 1000 - 100);
  });

  it('run --inline with REDIS_URL set takes its tokens from the bucket the workers share in Redis', async () => {
    const prefix = uniquePrefix('inline-rate');
    const { code, output, times, spanMs } = await limitedCalls(
      ['run', file, 'fleet-pause', '--inline', '--json'],
      5,
      { REDIS_URL: harness.server.url, NIGHTSHIFT_REDIS_PREFIX: prefix },
    );
    expect(code, output).toBe(0);
    expect(times).toHaveLength(21);
    expect(spanMs).toBeGreaterThanOrEqual(((21 - 5) / 5) * 1000 - 100);
    // the bucket's key outlives the run by a full refill (here 2 s)
    const engine = harness.engine('inline-rate');
    expect(await engine.redis.pttl(redisKeys(prefix).rateLimit('api'))).toBeGreaterThan(0);
  });

  it('run --inline whose REDIS_URL does not answer fails naming Redis, without calling the API', async () => {
    const once = join(mkdtempSync(join(tmpdir(), 'nightshift-rate-')), 'policy.yaml');
    writeFileSync(
      once,
      POLICY.replace(
        'target: { workgroups: ["*"] }',
        'target: { workgroups: ["*"] }\n    retry: { attempts: 1 }',
      ),
    );
    const { code, output, times } = await limitedCalls(
      ['run', once, 'fleet-pause', '--inline', '--json'],
      5,
      {
        REDIS_URL: 'redis://127.0.0.1:1',
      },
    );
    expect(code, output).toBe(1);
    expect(output).toContain('Redis did not answer the ownership ledger');
    expect(times).toEqual([]);
  });
});
