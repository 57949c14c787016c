import type { Redis } from 'ioredis';
import { describe } from 'vitest';
import { RedisOwnershipLedger } from '../../../src/store/ledger.js';
import { ledgerContract } from '../../helpers/ledger-contract.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

describe('RedisOwnershipLedger keeps the ledger’s rules, each in one script', () => {
  ledgerContract(() => {
    const ledger = new RedisOwnershipLedger(redis, { prefix: uniquePrefix('ledger-contract') });
    return { ledger, intervals: () => ledger.intervalsSince(new Date(0)) };
  });
});
