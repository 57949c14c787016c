import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { fleetSnapshots } from '../../../src/ops/fleet-metrics.js';
import { Metrics } from '../../../src/ops/index.js';
import { fleetStateStores } from '../../../src/store/fleet-state.js';
import { createRedis } from '../../../src/store/redis.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

/** The value of one sample line of the exposition text, or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((entry) => entry.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('fleet metrics, read from Redis at each scrape', () => {
  it('report drift per window, holds in force, and owned paused hours and their cost, closed and still owned', async () => {
    const state = fleetStateStores(redis, uniquePrefix('fleet-metrics'));
    const metrics = new Metrics({ processMetrics: false, fleet: fleetSnapshots(state) });
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
    const record = (key: string, pausedHoursAgo: number) => ({
      key,
      workgroupId: 'wg',
      workspaceId: key.split('/')[1] ?? '',
      owner: 'office',
      ownerKind: 'window' as const,
      runId: 'office@1',
      state: 'confirmed' as const,
      intendedAt: hoursAgo(pausedHoursAgo),
      pausedAt: hoursAgo(pausedHoursAgo),
      pricePerHour: 2,
      currency: 'EUR',
    });
    await state.windows.save('office', { period: 'down@x', pending: [], drift: 3 });
    await state.holds.place({
      pattern: 'wg/*',
      state: 'active',
      until: new Date(Date.now() + 3_600_000).toISOString(),
      reason: 'demo',
      by: 'ana',
      createdAt: new Date().toISOString(),
    });
    await state.ledger.put(record('wg/a', 10));
    await state.ledger.end('wg/a', 'resumed', new Date(Date.now() - 6 * 3_600_000));
    await state.ledger.put(record('wg/b', 1));

    const { body } = await metrics.scrape();
    expect(sample(body, 'nightshift_window_drift_workspaces{window="office"}')).toBe(3);
    expect(sample(body, 'nightshift_holds{state="active"}')).toBe(1);
    expect(sample(body, 'nightshift_holds{state="stopped"}')).toBe(0);
    // 4 closed hours and 1 still owned
    expect(sample(body, 'nightshift_paused_hours_total')).toBeCloseTo(5, 2);
    expect(sample(body, 'nightshift_estimated_cost_avoided_total{currency="EUR"}')).toBeCloseTo(10, 2);
  });

  it('a scrape with Redis unreachable goes on: the metrics are there, at the last figures read (none yet: 0)', async () => {
    const gone = createRedis({
      url: 'redis://127.0.0.1:1',
      role: 'test',
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    gone.on('error', () => undefined);
    const metrics = new Metrics({
      processMetrics: false,
      fleet: fleetSnapshots(fleetStateStores(gone, 'nowhere')),
      queueTimeoutMs: 500,
    });
    const { body } = await metrics.scrape();
    expect(sample(body, 'nightshift_paused_hours_total')).toBe(0);
    expect(sample(body, 'nightshift_window_drift_workspaces{window="office"}')).toBeUndefined();
    gone.disconnect();
  });
});
