import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisKeys } from '../../../src/store/keys.js';
import { PolicyKeyring } from '../../../src/store/policy-signing.js';
import { PolicyStore, type PolicyStoreOptions, policySha } from '../../../src/store/policy-store.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

// biome-ignore lint/suspicious/noTemplateCurlyInString: a policy's own ${VAR} syntax
const POLICY = 'version: 1\napi:\n  key: ${NIGHTSHIFT_API_KEY}\njobs:\n  nightly: {}\n# ünïcödé ✓\n';

const OLD_KEY = 'o'.repeat(40);
const NEW_KEY = 'n'.repeat(40);

/** A store signing with `keys` (default: the old key alone). */
function signingStore(options: PolicyStoreOptions = {}, keys: readonly string[] = [OLD_KEY]): PolicyStore {
  return new PolicyStore(redis, {
    prefix: uniquePrefix('policy'),
    keyring: PolicyKeyring.of(keys),
    ...options,
  });
}

describe('PolicyStore', () => {
  it('stores a policy under the sha256 of its UTF-8 text and returns it unchanged, signed', async () => {
    const store = signingStore();
    const sha = await store.put(POLICY);
    expect(sha).toBe(createHash('sha256').update(POLICY, 'utf8').digest('hex'));
    expect(await store.get(sha)).toBe(POLICY);
  });

  it('answers undefined for a sha it does not hold', async () => {
    const store = signingStore();
    expect(await store.get('0'.repeat(64))).toBeUndefined();
  });

  it('refreshes the TTL when the same policy is put again', async () => {
    const prefix = uniquePrefix('policy');
    const store = signingStore({ prefix, ttlMs: 60_000 });
    const sha = await store.put(POLICY);
    await redis.pexpire(redisKeys(prefix).policy(sha), 1_000);
    await redis.pexpire(redisKeys(prefix).policySignatures(sha), 1_000);
    expect(await store.put(POLICY)).toBe(sha);
    expect(await redis.pttl(redisKeys(prefix).policy(sha))).toBeGreaterThan(55_000);
    expect(await redis.pttl(redisKeys(prefix).policySignatures(sha))).toBeGreaterThan(55_000);
  });

  it('refuses a stored text that no longer matches its sha rather than run a policy nobody wrote', async () => {
    const prefix = uniquePrefix('policy');
    const store = signingStore({ prefix });
    const sha = await store.put(POLICY);
    await redis.set(redisKeys(prefix).policy(sha), `${POLICY}jobs: {}\n`);
    expect(await store.get(sha)).toBeUndefined();
  });

  it('grants a policy notice to the first claim only, for every replica, and keeps it claimed for the time given', async () => {
    const prefix = uniquePrefix('policy');
    const [one, two] = [signingStore({ prefix }), signingStore({ prefix })];
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
    const store = signingStore();
    expect(await store.rejected()).toBeUndefined();
    await store.setRejected(edit);
    expect(await store.rejected()).toEqual(edit);
    const failed = { ...edit, problems: [], error: 'Redis refused to store it' };
    await store.setRejected(failed);
    expect(await store.rejected()).toEqual(failed);
  });

  it('ends the rejection when a policy is loaded (setCurrent)', async () => {
    const store = signingStore();
    const sha = await store.put(POLICY);
    await store.setRejected(edit);
    await store.setCurrent(sha, { at: new Date('2026-11-25T20:01:00Z'), host: 'sched-1' });
    expect(await store.rejected()).toBeUndefined();
    expect(await store.current()).toMatchObject({ sha, loadedAt: '2026-11-25T20:01:00.000Z' });
  });

  it('keeps a refused edit as long as the policy in force (keep refreshes both)', async () => {
    const prefix = uniquePrefix('policy');
    const store = signingStore({ prefix, ttlMs: 60_000 });
    const sha = await store.put(POLICY);
    await store.setCurrent(sha);
    await store.setRejected(edit);
    await redis.pexpire(redisKeys(prefix).rejectedPolicy, 1_000);
    await store.keep(sha);
    expect(await redis.pttl(redisKeys(prefix).rejectedPolicy)).toBeGreaterThan(55_000);
  });
});

describe('PolicyStore: signatures', () => {
  it('reads a text written straight into Redis, with no signature, as unsigned and never hands it out to run', async () => {
    const prefix = uniquePrefix('policy');
    const sha = policySha(POLICY);
    await redis.set(redisKeys(prefix).policy(sha), POLICY);
    const reader = signingStore({ prefix });
    expect(await reader.read(sha)).toEqual({ text: POLICY, verdict: 'unsigned' });
    expect(await reader.get(sha)).toBeUndefined();
  });

  it('refuses a signature copied from another text: a signature covers its own text only', async () => {
    const prefix = uniquePrefix('policy');
    const signed = await signingStore({ prefix }).put(POLICY);
    const forged = `${POLICY}# and a sink command\n`;
    const sha = policySha(forged);
    const keys = redisKeys(prefix);
    await redis.set(keys.policy(sha), forged);
    await redis.hset(keys.policySignatures(sha), await redis.hgetall(keys.policySignatures(signed)));
    expect(await signingStore({ prefix }).read(sha)).toEqual({ text: forged, verdict: 'bad-signature' });
  });

  it('reads a text signed with another key as unknown-key, and one read without any key as unchecked', async () => {
    const prefix = uniquePrefix('policy');
    const sha = await signingStore({ prefix }, [NEW_KEY]).put(POLICY);
    expect((await signingStore({ prefix }, [OLD_KEY]).read(sha))?.verdict).toBe('unknown-key');
    const keyless = new PolicyStore(redis, { prefix });
    expect((await keyless.read(sha))?.verdict).toBe('unchecked');
    expect(await keyless.get(sha)).toBeUndefined();
    await expect(keyless.put(POLICY)).rejects.toThrow('no policy key to sign with');
  });

  it('keeps the signatures of two processes with keys of their own side by side: each one verifies the text', async () => {
    const prefix = uniquePrefix('policy');
    const [one, two] = [PolicyKeyring.local(), PolicyKeyring.local()];
    const sha = await new PolicyStore(redis, { prefix, keyring: one }).put(POLICY);
    await new PolicyStore(redis, { prefix, keyring: two }).put(POLICY);
    expect(await new PolicyStore(redis, { prefix, keyring: one }).get(sha)).toBe(POLICY);
    expect(await new PolicyStore(redis, { prefix, keyring: two }).get(sha)).toBe(POLICY);
  });

  it('names the policy in force with its text only when signed, and keeps what is stored for readers of names', async () => {
    const prefix = uniquePrefix('policy');
    const sha = policySha(POLICY);
    await redis.set(redisKeys(prefix).policy(sha), POLICY);
    const reader = signingStore({ prefix });
    await reader.setCurrent(sha, { at: new Date('2026-11-25T20:01:00Z'), host: 'forger' });
    expect(await reader.current()).toMatchObject({
      sha,
      text: undefined,
      stored: { text: POLICY, verdict: 'unsigned' },
    });
    await reader.put(POLICY);
    expect((await reader.current())?.text).toBe(POLICY);
  });
});

describe('PolicyStore: a key change, old and new key accepted during it', () => {
  it('goes from the old key to the new without refusing a text, then refuses what only the old key signed', async () => {
    const prefix = uniquePrefix('policy');
    const before = await signingStore({ prefix }, [OLD_KEY]).put(POLICY);

    // step 1: every process gets both keys; they sign with both and accept either
    const during = signingStore({ prefix }, [NEW_KEY, OLD_KEY]);
    expect(await during.get(before)).toBe(POLICY);
    const edited = `${POLICY}# edited during the change\n`;
    const duringSha = await during.put(edited);
    // a process not yet given the new key still accepts what the others sign meanwhile
    expect(await signingStore({ prefix }, [OLD_KEY]).get(duringSha)).toBe(edited);

    // step 2: schedulers restarted with both keys sign the policy in force again
    await during.put(POLICY);

    // step 3: the old key removed everywhere
    const after = signingStore({ prefix }, [NEW_KEY]);
    expect(await after.get(before)).toBe(POLICY);
    expect(await after.get(duringSha)).toBe(edited);
    const oldOnly = await signingStore({ prefix }, [OLD_KEY]).put(
      `${POLICY}# signed with the old key alone\n`,
    );
    expect((await after.read(oldOnly))?.verdict).toBe('unknown-key');
    expect(await after.get(oldOnly)).toBeUndefined();
  });
});
