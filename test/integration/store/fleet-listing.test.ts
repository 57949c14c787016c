import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { FleetListing } from '../../../src/engine/index.js';
import { RedisFleetListings } from '../../../src/store/fleet-listing.js';
import { redisKeys } from '../../../src/store/keys.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

function listing(at: string, runId: string, status = 'Active'): FleetListing {
  return {
    at,
    runId,
    job: 'nightly-pause',
    workgroups: [
      {
        workgroup_id: 'wg-1',
        name: 'dev-core',
        region: 'us-east-1',
        workspaces: [
          {
            workspace_id: 'ws-1',
            name: 'api',
            workgroup_id: 'wg-1',
            workgroup_name: 'dev-core',
            status,
            region: 'us-east-1',
            database_id: 'db-1',
            workspace_type: { cpu: '8', memory: '32Gi', typeName: 'TG-8' },
          },
        ],
      },
    ],
  };
}

describe('RedisFleetListings', () => {
  it('answers the listing saved, and when it was made, as they were saved', async () => {
    const listings = new RedisFleetListings(redis, { prefix: uniquePrefix('listing') });
    const saved = listing('2026-11-25T20:00:00.000Z', 'run-1');
    await listings.save(saved);
    expect(await listings.latestAt()).toBe(saved.at);
    expect(await listings.latest()).toEqual(saved);
  });

  it('writes nothing when a run saw the fleet already kept, until the kept listing is older than refreshMs', async () => {
    const listings = new RedisFleetListings(redis, { prefix: uniquePrefix('listing'), refreshMs: 60_000 });
    await listings.save(listing('2026-11-25T20:00:00.000Z', 'run-1'));
    await listings.save(listing('2026-11-25T20:00:59.000Z', 'run-2'));
    expect(await listings.latest()).toMatchObject({ at: '2026-11-25T20:00:00.000Z', runId: 'run-1' });
    // the fleet changed: kept at once
    await listings.save(listing('2026-11-25T20:00:59.500Z', 'run-3', 'Stopped'));
    expect(await listings.latest()).toMatchObject({ runId: 'run-3' });
    // the same fleet a minute after it was kept: kept again, to show its age
    await listings.save(listing('2026-11-25T20:02:00.000Z', 'run-4', 'Stopped'));
    expect(await listings.latest()).toMatchObject({ at: '2026-11-25T20:02:00.000Z', runId: 'run-4' });
  });

  it('answers undefined before any run has listed the fleet', async () => {
    const listings = new RedisFleetListings(redis, { prefix: uniquePrefix('listing') });
    expect(await listings.latestAt()).toBeUndefined();
    expect(await listings.latest()).toBeUndefined();
  });

  it('keeps a newer listing when a run that listed earlier saves after it', async () => {
    const listings = new RedisFleetListings(redis, { prefix: uniquePrefix('listing') });
    const newer = listing('2026-11-25T20:05:00.000Z', 'run-late-lister', 'Stopped');
    await listings.save(newer);
    await listings.save(listing('2026-11-25T20:00:00.000Z', 'run-slow-finisher'));
    expect(await listings.latestAt()).toBe(newer.at);
    expect(await listings.latest()).toEqual(newer);
  });

  it('replaces the kept listing with one made later', async () => {
    const listings = new RedisFleetListings(redis, { prefix: uniquePrefix('listing') });
    await listings.save(listing('2026-11-25T20:00:00.000Z', 'run-1'));
    const later = listing('2026-11-25T20:00:00.001Z', 'run-2', 'Stopped');
    await listings.save(later);
    expect(await listings.latest()).toEqual(later);
  });

  it('answers undefined for a body this version cannot read, while still telling when it was made', async () => {
    const prefix = uniquePrefix('listing');
    await redis.hset(
      redisKeys(prefix).fleetListing,
      'at',
      '2026-11-25T20:00:00.000Z',
      'body',
      '{"workgroups":7}',
    );
    const listings = new RedisFleetListings(redis, { prefix });
    expect(await listings.latestAt()).toBe('2026-11-25T20:00:00.000Z');
    expect(await listings.latest()).toBeUndefined();
  });
});
