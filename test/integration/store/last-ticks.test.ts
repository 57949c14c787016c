import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisKeys } from '../../../src/store/keys.js';
import { LastTicks } from '../../../src/store/last-ticks.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => ({ redis } = client));

describe('LastTicks', () => {
  it('moves a job’s last tick forward, never back, whichever scheduler records it', async () => {
    const prefix = uniquePrefix('ticks');
    const [one, two] = [new LastTicks(redis, { prefix }), new LastTicks(redis, { prefix })];
    await one.advance([['nightly', new Date(2_000)]]);
    await two.advance([
      ['nightly', new Date(1_000)],
      ['hourly', new Date(500)],
    ]);
    expect(await one.get(['nightly', 'hourly'])).toEqual([2_000, 500]);
    await two.advance([['nightly', new Date(3_000)]]);
    expect(await one.get(['nightly'])).toEqual([3_000]);
  });

  it('answers undefined for a job never ticked and for a value it cannot read', async () => {
    const prefix = uniquePrefix('ticks');
    await redis.set(redisKeys(prefix).lastTick('garbled'), 'soon');
    expect(await new LastTicks(redis, { prefix }).get(['never', 'garbled'])).toEqual([undefined, undefined]);
    expect(await new LastTicks(redis, { prefix }).get([])).toEqual([]);
  });
});
