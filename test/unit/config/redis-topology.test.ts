import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { settingsFrom, UsageError } from '../../../src/cli/exit.js';
import { ConfigError, configuredRedis, loadSettings, serviceRedis } from '../../../src/config/index.js';
import { queuePrefix } from '../../../src/queue/index.js';
import { describeRedis } from '../../../src/store/index.js';

const PASSWORD = 'hunter2-not-to-be-repeated';

const secrets = mkdtempSync(join(tmpdir(), 'nightshift-redis-settings-'));
afterAll(() => rmSync(secrets, { recursive: true, force: true }));
let files = 0;

function secretFile(content: string): string {
  const file = join(secrets, `secret-${++files}`);
  writeFileSync(file, content);
  return file;
}

function problem(env: Record<string, string>): string {
  try {
    loadSettings(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('Redis topology settings', () => {
  it('default to the local Redis by URL when nothing is set', () => {
    const settings = loadSettings({});
    expect(configuredRedis(settings)).toBeUndefined();
    expect(serviceRedis(settings)).toEqual({ kind: 'url', url: 'redis://127.0.0.1:6379' });
  });

  it('keep REDIS_URL as it was', () => {
    expect(serviceRedis(loadSettings({ REDIS_URL: 'redis://cache:6380/2' }))).toEqual({
      kind: 'url',
      url: 'redis://cache:6380/2',
    });
  });

  it('read NIGHTSHIFT_REDIS_CLUSTER_NODES as a cluster of host:port addresses, IPv6 in brackets', () => {
    const settings = loadSettings({
      NIGHTSHIFT_REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-b.internal:7001,[fd00::3]:7002 ',
      NIGHTSHIFT_REDIS_PASSWORD: PASSWORD,
    });
    expect(serviceRedis(settings)).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-b.internal', port: 7001 },
        { host: 'fd00::3', port: 7002 },
      ],
      password: PASSWORD,
    });
  });

  it('read NIGHTSHIFT_REDIS_SENTINELS with the monitored name and both passwords, each from a file if asked', () => {
    const settings = loadSettings({
      NIGHTSHIFT_REDIS_SENTINELS: 's1:26379,s2:26379',
      NIGHTSHIFT_REDIS_SENTINEL_NAME: 'nightshift-primary',
      NIGHTSHIFT_REDIS_PASSWORD_FILE: secretFile(`${PASSWORD}\n`),
      NIGHTSHIFT_REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    });
    expect(serviceRedis(settings)).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      name: 'nightshift-primary',
      password: PASSWORD,
      sentinelPassword: 'sentinel-secret',
    });
  });

  it('log in as NIGHTSHIFT_REDIS_USERNAME on a cluster or the Sentinels’ nodes', () => {
    expect(
      serviceRedis(
        loadSettings({ NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000', NIGHTSHIFT_REDIS_USERNAME: 'nightshift' }),
      ),
    ).toMatchObject({ kind: 'cluster', username: 'nightshift' });
    expect(
      serviceRedis(
        loadSettings({
          NIGHTSHIFT_REDIS_SENTINELS: 's:26379',
          NIGHTSHIFT_REDIS_SENTINEL_NAME: 'p',
          NIGHTSHIFT_REDIS_USERNAME: 'nightshift',
        }),
      ),
    ).toMatchObject({ kind: 'sentinel', username: 'nightshift' });
    expect(
      serviceRedis(loadSettings({ REDIS_URL: 'redis://a:6379', NIGHTSHIFT_REDIS_USERNAME: 'nightshift' })),
    ).toMatchObject({ kind: 'url', username: 'nightshift' });
    expect(problem({ REDIS_URL: 'redis://ops@a:6379', NIGHTSHIFT_REDIS_USERNAME: 'nightshift' })).toContain(
      'NIGHTSHIFT_REDIS_USERNAME is set and REDIS_URL holds a user too; give the user in one place',
    );
  });

  it('give one Redis by URL (or the local default) the password from NIGHTSHIFT_REDIS_PASSWORD_FILE, which no URL can read', () => {
    const file = secretFile(`${PASSWORD}\n`);
    expect(
      serviceRedis(loadSettings({ REDIS_URL: 'redis://redis:6379', NIGHTSHIFT_REDIS_PASSWORD_FILE: file })),
    ).toEqual({ kind: 'url', url: 'redis://redis:6379', password: PASSWORD });
    expect(serviceRedis(loadSettings({ NIGHTSHIFT_REDIS_PASSWORD: PASSWORD }))).toEqual({
      kind: 'url',
      url: 'redis://127.0.0.1:6379',
      password: PASSWORD,
    });
    // commands that use no Redis without REDIS_URL still use none
    expect(configuredRedis(loadSettings({ NIGHTSHIFT_REDIS_PASSWORD_FILE: file }))).toBeUndefined();
  });

  it('refuse a password given both in REDIS_URL and apart, naming the variables, never the password', () => {
    for (const url of [`redis://:${PASSWORD}@a:6379`, `redis://a:6379/?password=${PASSWORD}`]) {
      const message = problem({ REDIS_URL: url, NIGHTSHIFT_REDIS_PASSWORD_FILE: '/run/secrets/redis' });
      expect(message).toContain(
        'NIGHTSHIFT_REDIS_PASSWORD_FILE is set and REDIS_URL holds a password too; give the password in one place',
      );
      expect(message).not.toContain(PASSWORD);
    }
  });

  it('name a password file that cannot be read, never its content', () => {
    const settings = loadSettings({
      NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000',
      NIGHTSHIFT_REDIS_PASSWORD_FILE: '/nonexistent/redis-password',
    });
    expect(() => configuredRedis(settings)).toThrow(
      /NIGHTSHIFT_REDIS_PASSWORD_FILE cannot be read \(ENOENT\)/,
    );
  });

  it.each([
    ['a bare host', 'redis-a', /NIGHTSHIFT_REDIS_CLUSTER_NODES must be host:port pairs .* got "redis-a"/],
    ['a port out of range', 'a:7000,b:70000', /got "b:70000"/],
    ['an empty item', 'a:7000,,b:7001', /got ""/],
    ['an unbracketed IPv6 host', 'fd00::3:7000', /got "fd00::3:7000"/],
  ])('refuse %s in a node list, naming the item', (_, value, message) => {
    expect(problem({ NIGHTSHIFT_REDIS_CLUSTER_NODES: value })).toMatch(message);
  });

  it.each([
    [
      { REDIS_URL: 'redis://a:6379', NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000' },
      'REDIS_URL and NIGHTSHIFT_REDIS_CLUSTER_NODES',
    ],
    [
      {
        REDIS_URL: 'redis://a:6379',
        NIGHTSHIFT_REDIS_SENTINELS: 'a:26379',
        NIGHTSHIFT_REDIS_SENTINEL_NAME: 'p',
      },
      'REDIS_URL and NIGHTSHIFT_REDIS_SENTINELS',
    ],
    [
      {
        NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000',
        NIGHTSHIFT_REDIS_SENTINELS: 'a:26379',
        NIGHTSHIFT_REDIS_SENTINEL_NAME: 'p',
      },
      'NIGHTSHIFT_REDIS_CLUSTER_NODES and NIGHTSHIFT_REDIS_SENTINELS',
    ],
  ])('refuse two topologies at once, naming both variables', (env, names) => {
    expect(problem(env)).toContain(`${names} are both set`);
  });

  it('refuse Sentinels without the name they monitor the primary under', () => {
    expect(problem({ NIGHTSHIFT_REDIS_SENTINELS: 'a:26379' })).toMatch(
      /NIGHTSHIFT_REDIS_SENTINEL_NAME is not set/,
    );
  });

  it.each([
    'NIGHTSHIFT_REDIS_SENTINEL_NAME',
    'NIGHTSHIFT_REDIS_SENTINEL_PASSWORD',
    'NIGHTSHIFT_REDIS_SENTINEL_PASSWORD_FILE',
  ])('refuse %s without NIGHTSHIFT_REDIS_SENTINELS', (name) => {
    expect(problem({ [name]: 'x' })).toContain(`${name} is set without NIGHTSHIFT_REDIS_SENTINELS`);
  });

  it('refuse a password given both directly and as a file, without repeating it', () => {
    const message = problem({
      NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000',
      NIGHTSHIFT_REDIS_PASSWORD: PASSWORD,
      NIGHTSHIFT_REDIS_PASSWORD_FILE: '/run/secrets/redis',
    });
    expect(message).toContain('NIGHTSHIFT_REDIS_PASSWORD and NIGHTSHIFT_REDIS_PASSWORD_FILE are both set');
    expect(message).not.toContain(PASSWORD);
  });

  it('add TLS to a cluster or Sentinels, trusting the CA bundle a file holds', () => {
    const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    const settings = loadSettings({
      NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000',
      NIGHTSHIFT_REDIS_TLS: 'true',
      NIGHTSHIFT_REDIS_TLS_CA_FILE: secretFile(ca),
    });
    expect(serviceRedis(settings)).toMatchObject({ kind: 'cluster', tls: { ca } });
    expect(
      serviceRedis(
        loadSettings({
          NIGHTSHIFT_REDIS_SENTINELS: 's:26379',
          NIGHTSHIFT_REDIS_SENTINEL_NAME: 'p',
          NIGHTSHIFT_REDIS_TLS: 'true',
        }),
      ),
    ).toMatchObject({ kind: 'sentinel', tls: { ca: undefined } });
    expect(serviceRedis(loadSettings({ NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000' }))).toMatchObject({
      tls: undefined,
    });
  });

  it.each([
    [
      { REDIS_URL: 'redis://a:6379', NIGHTSHIFT_REDIS_TLS: 'true' },
      'NIGHTSHIFT_REDIS_TLS is set with REDIS_URL; with REDIS_URL, TLS is a rediss:// URL',
    ],
    [
      { NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000', NIGHTSHIFT_REDIS_TLS_CA_FILE: '/ca.pem' },
      'NIGHTSHIFT_REDIS_TLS_CA_FILE is set without NIGHTSHIFT_REDIS_TLS=true',
    ],
    [
      { NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000', NIGHTSHIFT_REDIS_TLS: 'yes' },
      'NIGHTSHIFT_REDIS_TLS must be one of true, false, got "yes"',
    ],
  ])('refuse TLS settings that cannot apply: %j', (env, message) => {
    expect(problem(env)).toContain(message);
  });

  it('make conflicting settings bad usage (exit 2)', () => {
    expect(() =>
      settingsFrom({ REDIS_URL: 'redis://a:6379', NIGHTSHIFT_REDIS_CLUSTER_NODES: 'a:7000' }),
    ).toThrow(UsageError);
  });
});

describe('describeRedis', () => {
  it('names where each topology is, never a password', () => {
    expect(describeRedis({ kind: 'url', url: `redis://:${PASSWORD}@cache:6379` })).toBe(
      'redis://:***@cache:6379',
    );
    expect(
      describeRedis({
        kind: 'cluster',
        nodes: [
          { host: 'a', port: 7000 },
          { host: 'fd00::3', port: 7001 },
        ],
        username: 'nightshift',
        password: PASSWORD,
        tls: undefined,
      }),
    ).toBe('cluster a:7000,[fd00::3]:7001');
    expect(
      describeRedis({
        kind: 'sentinel',
        sentinels: [{ host: 's1', port: 26379 }],
        name: 'primary',
        username: undefined,
        password: PASSWORD,
        sentinelPassword: PASSWORD,
        tls: undefined,
      }),
    ).toBe('primary "primary" of sentinels s1:26379');
  });
});

describe('queuePrefix', () => {
  it('hash-tags BullMQ’s prefix on a Redis Cluster and keeps it bare elsewhere', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    const single = new Redis({ lazyConnect: true });
    try {
      expect(queuePrefix(cluster, 'nightshift')).toBe('{nightshift}');
      expect(queuePrefix(single, 'nightshift')).toBe('nightshift');
    } finally {
      cluster.disconnect();
      single.disconnect();
    }
  });
});
