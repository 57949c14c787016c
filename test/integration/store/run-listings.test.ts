import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { type FleetListing, sliceListing } from '../../../src/engine/index.js';
import { RunListings } from '../../../src/store/index.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => ({ redis } = client));

const LISTING: FleetListing = {
  at: '2026-11-26T19:00:00.000Z',
  runId: 'edge@1',
  job: 'edge',
  workgroups: [
    {
      workgroup_id: 'wg-1',
      name: 'dev',
      region: 'eu',
      workspaces: ['ws-1', 'ws-2', 'ws-3'].map((id) => ({ workspace_id: id, name: id, status: 'Active' })),
    },
  ],
};

describe('RunListings', () => {
  it('keeps the parts a run was split into beside their slices, for an execution that takes the run over, until the run clears them', async () => {
    const listings = new RunListings(redis, { prefix: uniquePrefix('run-listings') });
    const parts = [
      { index: 0, keys: ['wg-1/ws-1', 'wg-1/ws-2'] },
      { index: 1, keys: ['wg-1/ws-3'] },
    ];
    expect(await listings.parts('edge@1')).toBeUndefined();
    await listings.save('edge@1', sliceListing(LISTING, parts), parts);
    expect(await listings.parts('edge@1')).toEqual(parts);
    expect(
      (await listings.load('edge@1', { index: 1, keys: ['wg-1/ws-3'] }))?.workgroups[0]?.workspaces,
    ).toHaveLength(1);
    await listings.clear('edge@1');
    expect(await listings.parts('edge@1')).toBeUndefined();
  });
});
