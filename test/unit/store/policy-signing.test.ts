import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PolicyKeyring, PolicyRefusedError } from '../../../src/store/policy-signing.js';
import { type ParameterBinding, PolicyStore } from '../../../src/store/policy-store.js';
import type { RedisConnection } from '../../../src/store/redis.js';

const KEY = 'k'.repeat(32);
const OTHER = 'x'.repeat(48);
const TEXT = 'version: 1\njobs: {}\n';
const SHA = 'a'.repeat(64);

describe('PolicyKeyring', () => {
  it('verifies a text it signed, and nothing else: another text, another key, no signature', () => {
    const keyring = PolicyKeyring.of([KEY]);
    const signatures = keyring.sign(TEXT);
    expect(keyring.verify(TEXT, signatures)).toBe('signed');
    expect(keyring.verify(`${TEXT}# changed\n`, signatures)).toBe('bad-signature');
    expect(PolicyKeyring.of([OTHER]).verify(TEXT, signatures)).toBe('unknown-key');
    expect(keyring.verify(TEXT, {})).toBe('unsigned');
  });

  it('refuses a signature of the right length that is not the text’s, and one of another length', () => {
    const keyring = PolicyKeyring.of([KEY]);
    const [[id, mac]] = Object.entries(keyring.sign(TEXT)) as [[string, string]];
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('0') ? '1' : '0'}`;
    expect(keyring.verify(TEXT, { [id]: flipped })).toBe('bad-signature');
    expect(keyring.verify(TEXT, { [id]: mac.slice(0, 10) })).toBe('bad-signature');
  });

  it('signs with every key it holds and accepts a text any one of them signed', () => {
    const both = PolicyKeyring.of([OTHER, KEY]);
    expect(Object.keys(both.sign(TEXT))).toHaveLength(2);
    expect(both.verify(TEXT, PolicyKeyring.of([KEY]).sign(TEXT))).toBe('signed');
    expect(PolicyKeyring.of([KEY]).verify(TEXT, both.sign(TEXT))).toBe('signed');
    expect(PolicyKeyring.of([OTHER]).verify(TEXT, both.sign(TEXT))).toBe('signed');
  });

  it('makes a local key no other keyring shares', () => {
    const local = PolicyKeyring.local();
    expect(local.local).toBe(true);
    expect(PolicyKeyring.of([KEY]).local).toBe(false);
    expect(PolicyKeyring.local().verify(TEXT, local.sign(TEXT))).toBe('unknown-key');
  });

  it('never shows a key: not in its signatures or key ids, not in JSON, not in util.inspect', () => {
    const keyring = PolicyKeyring.of([KEY]);
    const shown = [JSON.stringify(keyring), inspect(keyring, { showHidden: true, depth: 5 })];
    shown.push(JSON.stringify(keyring.sign(TEXT)));
    for (const text of shown) expect(text).not.toContain(KEY);
  });
});

describe('PolicyRefusedError', () => {
  it('names the variable to set and why, for each verdict, never a key', () => {
    const unsigned = new PolicyRefusedError(SHA, 'unsigned');
    expect(unsigned.code).toBe('NS_POLICY_NOT_SIGNED');
    expect(unsigned.message).toMatch(/^policy a{12} refused: it is not signed; .*NIGHTSHIFT_POLICY_KEY/);
    expect(new PolicyRefusedError(SHA, 'unknown-key').message).toContain(
      'signed with a key this worker does not hold; set NIGHTSHIFT_POLICY_KEY',
    );
    expect(new PolicyRefusedError(SHA, 'bad-signature').message).toContain('altered in Redis');
    expect(new PolicyRefusedError(SHA, 'unknown-key', { local: true }).message).toContain(
      'start without NIGHTSHIFT_POLICY_KEY',
    );
  });
});

describe("a run's parameters, signed by the process that queued the run", () => {
  // signing and checking touch no Redis
  const storeWith = (keyring?: PolicyKeyring) => new PolicyStore({} as RedisConnection, { keyring });
  const RUN: ParameterBinding = {
    runId: 'drill@manual-1',
    job: 'drill',
    policySha: SHA,
    parameters: { backupId: 'bk-1', waitReady: '10m' },
  };

  it('hold for that run, whatever order the parameters are listed in', () => {
    const store = storeWith(PolicyKeyring.of([KEY]));
    const signatures = store.signParameters(RUN);
    const reordered = { waitReady: '10m', backupId: 'bk-1' };
    expect(store.verifyParameters({ ...RUN, parameters: reordered }, signatures)).toBe('signed');
  });

  it('do not hold for other parameters, another run, job or policy, or another key', () => {
    const store = storeWith(PolicyKeyring.of([KEY]));
    const signatures = store.signParameters(RUN);
    for (const changed of [
      { ...RUN, parameters: { ...RUN.parameters, backupId: 'bk-2' } },
      { ...RUN, parameters: { ...RUN.parameters, workspace: 'prod' } },
      { ...RUN, runId: 'drill@manual-2' },
      { ...RUN, job: 'other' },
      { ...RUN, policySha: 'b'.repeat(64) },
    ])
      expect(store.verifyParameters(changed, signatures)).toBe('bad-signature');
    expect(store.verifyParameters(RUN, {})).toBe('unsigned');
    expect(storeWith(PolicyKeyring.of([OTHER])).verifyParameters(RUN, signatures)).toBe('unknown-key');
    expect(storeWith().verifyParameters(RUN, signatures)).toBe('unchecked');
  });

  it('never pass for a policy text, nor a policy text for them', () => {
    const keyring = PolicyKeyring.of([KEY]);
    const signatures = storeWith(keyring).signParameters(RUN);
    expect(keyring.verify(TEXT, signatures)).toBe('bad-signature');
    expect(storeWith(keyring).verifyParameters(RUN, keyring.sign(TEXT))).toBe('bad-signature');
  });
});
