import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunHistory } from '../../../src/store/history.js';
import { assertBuilt, startCli } from '../../helpers/engine.js';
import { uniquePrefix } from '../../helpers/redis.js';
import { startRedisCluster, useTopology } from '../../helpers/redis-topologies.js';
import { runSummary } from '../../helpers/summaries.js';

const PASSWORD = 'cluster-secret-71aa';

const USER = 'nightshift';
const cluster = useTopology(() => startRedisCluster({ user: USER, password: PASSWORD, tls: true }));

/** The variables for the test cluster's TLS (on, trusting its own CA) and its ACL user. */
function tls(): Record<string, string> {
  return {
    NIGHTSHIFT_REDIS_TLS: 'true',
    NIGHTSHIFT_REDIS_TLS_CA_FILE: cluster.current.caFile as string,
    NIGHTSHIFT_REDIS_USERNAME: USER,
  };
}

const secrets = mkdtempSync(join(tmpdir(), 'nightshift-cluster-secrets-'));
afterAll(() => rmSync(secrets, { recursive: true, force: true }));

beforeAll(() => {
  assertBuilt();
});

describe('a Redis Cluster whose nodes require an ACL user, its password and TLS', () => {
  it('is reached over TLS as that user with the password from a mounted file: `history` reads the runs kept there', async () => {
    const prefix = uniquePrefix('cluster-auth');
    const redis = cluster.current.connect('test');
    const run = runSummary({ job: 'nightly' });
    try {
      await new RunHistory(redis, { prefix, retention: { maxAgeMs: 3_650 * 86_400_000 } }).record(run);
    } finally {
      redis.disconnect();
    }
    const file = join(secrets, 'password');
    writeFileSync(file, `${PASSWORD}\n`);
    const cli = startCli(['history', '--json'], {
      ...cluster.current.environment,
      ...tls(),
      NIGHTSHIFT_REDIS_PREFIX: prefix,
      NIGHTSHIFT_REDIS_PASSWORD_FILE: file,
    });
    expect(await cli.exited, cli.output()).toBe(0);
    expect((JSON.parse(cli.stdout()) as { runId: string }[]).map((kept) => kept.runId)).toEqual([run.runId]);
  });

  it('refuses a wrong password, and the command prints neither password', async () => {
    const wrong = 'wrong-cluster-secret-9e2f';
    const cli = startCli(['history', '--json'], {
      ...cluster.current.environment,
      ...tls(),
      NIGHTSHIFT_REDIS_PASSWORD: wrong,
      NIGHTSHIFT_LOG_LEVEL: 'debug',
    });
    expect(await cli.exited, cli.output()).toBe(1);
    // the outage's one warning says why, in Redis's words
    expect(cli.output()).toContain('"refused":"WRONGPASS invalid username-password pair');
    for (const secret of [wrong, PASSWORD]) expect(cli.output(), cli.output()).not.toContain(secret);
  });

  it('refuses the right password without the user (its `default` user is off)', async () => {
    const { NIGHTSHIFT_REDIS_USERNAME: _user, ...withoutUser } = tls();
    const cli = startCli(['history', '--json'], {
      ...cluster.current.environment,
      ...withoutUser,
      NIGHTSHIFT_REDIS_PASSWORD: PASSWORD,
    });
    expect(await cli.exited, cli.output()).toBe(1);
    expect(cli.output()).toContain('"refused":"WRONGPASS');
  });

  it('is not reached without trusting its CA: a certificate nobody vouched for is refused (exit 1)', async () => {
    const cli = startCli(['history', '--json'], {
      ...cluster.current.environment,
      NIGHTSHIFT_REDIS_TLS: 'true',
      NIGHTSHIFT_REDIS_PASSWORD: PASSWORD,
    });
    expect(await cli.exited, cli.output()).toBe(1);
    expect(cli.stderr()).toContain('did not answer');
  });
});
