import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisKeys } from '../../../src/store/keys.js';
import { PolicyStore, policySha } from '../../../src/store/policy-store.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

// biome-ignore lint/suspicious/noTemplateCurlyInString: a policy's own ${VAR} syntax
const POLICY = 'version: 1\napi:\n  key: ${NIGHTSHIFT_API_KEY}\njobs:\n  nightly: {}\n# ünïcödé ✓\n';

describe('PolicyStore', () => {
  it('stores a policy under the sha256 of its UTF-8 text and returns it unchanged', async () => {
    const store = new PolicyStore(redis, { prefix: uniquePrefix('policy') });
    const sha = await store.put(POLICY);
    expect(sha).toBe(createHash('sha256').update(POLICY, 'utf8').digest('hex'));
    expect(await store.get(sha)).toBe(POLICY);
  });

  it('answers undefined for a sha it does not hold', async () => {
    const store = new PolicyStore(redis, { prefix: uniquePrefix('policy') });
    expect(await store.get('0'.repeat(64))).toBeUndefined();
  });

  it('refreshes the TTL when the same policy is put again', async () => {
    const prefix = uniquePrefix('policy');
    const store = new PolicyStore(redis, { prefix, ttlMs: 60_000 });
    const sha = await store.put(POLICY);
    await redis.pexpire(redisKeys(prefix).policy(sha), 1_000);
    expect(await store.put(POLICY)).toBe(sha);
    expect(await redis.pttl(redisKeys(prefix).policy(sha))).toBeGreaterThan(55_000);
  });

  it('refuses a stored text that no longer matches its sha rather than run a policy nobody wrote', async () => {
    const prefix = uniquePrefix('policy');
    const store = new PolicyStore(redis, { prefix });
    const sha = await store.put(POLICY);
    await redis.set(redisKeys(prefix).policy(sha), `${POLICY}jobs: {}\n`);
    expect(await store.get(sha)).toBeUndefined();
  });

  it('grants a policy notice to the first claim only, for every replica, and keeps it claimed for the time given', async () => {
    const prefix = uniquePrefix('policy');
    const [one, two] = [new PolicyStore(redis, { prefix }), new PolicyStore(redis, { prefix })];
    const sha = policySha(POLICY);
    expect(await one.claimNotice('failure', sha, 60_000)).toBe(true);
    expect(await two.claimNotice('failure', sha, 60_000)).toBe(false);
    expect(await two.claimNotice('recovered', sha, 60_000)).toBe(true);
    const ttl = await redis.pttl(redisKeys(prefix).policyNotice('failure', sha));
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});

describe('PolicyStore: the edit a scheduler refused', () => {
  const edit = {
    sha: policySha(`${POLICY}oops: [\n`),
    at: '2026-11-25T20:00:00.000Z',
    host: 'sched-1',
    problems: ['policy.yaml:7:1: unexpected end of the flow sequence'],
  };

  it('answers the refused edit recorded, and nothing before one is', async () => {
    const store = new PolicyStore(redis, { prefix: uniquePrefix('policy') });
    expect(await store.rejected()).toBeUndefined();
    await store.setRejected(edit);
    expect(await store.rejected()).toEqual(edit);
    const failed = { ...edit, problems: [], error: 'Redis refused to store it' };
    await store.setRejected(failed);
    expect(await store.rejected()).toEqual(failed);
  });

  it('ends the rejection when a policy is loaded (setCurrent)', async () => {
    const store = new PolicyStore(redis, { prefix: uniquePrefix('policy') });
    const sha = await store.put(POLICY);
    await store.setRejected(edit);
    await store.setCurrent(sha, { at: new Date('2026-11-25T20:01:00Z'), host: 'sched-1' });
    expect(await store.rejected()).toBeUndefined();
    expect(await store.current()).toMatchObject({ sha, loadedAt: '2026-11-25T20:01:00.000Z' });
  });

  it('keeps a refused edit as long as the policy in force (keep refreshes both)', async () => {
    const prefix = uniquePrefix('policy');
    const store = new PolicyStore(redis, { prefix, ttlMs: 60_000 });
    const sha = await store.put(POLICY);
    await store.setCurrent(sha);
    await store.setRejected(edit);
    await redis.pexpire(redisKeys(prefix).rejectedPolicy, 1_000);
    await store.keep(sha);
    expect(await redis.pttl(redisKeys(prefix).rejectedPolicy)).toBeGreaterThan(55_000);
  });
});
