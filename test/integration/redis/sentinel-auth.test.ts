import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunHistory } from '../../../src/store/history.js';
import { assertBuilt, startCli } from '../../helpers/engine.js';
import { uniquePrefix } from '../../helpers/redis.js';
import { startRedisSentinels, useTopology } from '../../helpers/redis-topologies.js';
import { runSummary } from '../../helpers/summaries.js';

const PASSWORD = 'primary-secret-8d1f';
const SENTINEL_PASSWORD = 'sentinel-secret-3c7a';

const sentinels = useTopology(() =>
  startRedisSentinels({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD, tls: true }),
);

/** The variables for the test Sentinels' TLS: on, trusting their own CA. */
function tls(): Record<string, string> {
  return { NIGHTSHIFT_REDIS_TLS: 'true', NIGHTSHIFT_REDIS_TLS_CA_FILE: sentinels.current.caFile as string };
}

beforeAll(() => {
  assertBuilt();
});

const secrets = mkdtempSync(join(tmpdir(), 'nightshift-redis-secrets-'));
afterAll(() => rmSync(secrets, { recursive: true, force: true }));

function secretFile(name: string, content: string): string {
  const file = join(secrets, name);
  writeFileSync(file, `${content}\n`);
  return file;
}

describe('Sentinels and a primary that require passwords and TLS', () => {
  it('are reached over TLS with the passwords from mounted files: `history` reads the runs kept there', async () => {
    const prefix = uniquePrefix('sentinel-auth');
    const redis = sentinels.current.connect('test');
    const run = runSummary({ job: 'nightly' });
    try {
      await new RunHistory(redis, { prefix, retention: { maxAgeMs: 3_650 * 86_400_000 } }).record(run);
    } finally {
      redis.disconnect();
    }
    const cli = startCli(['history', '--json'], {
      ...sentinels.current.environment,
      ...tls(),
      NIGHTSHIFT_REDIS_PREFIX: prefix,
      NIGHTSHIFT_REDIS_PASSWORD_FILE: secretFile('password', PASSWORD),
      NIGHTSHIFT_REDIS_SENTINEL_PASSWORD_FILE: secretFile('sentinel-password', SENTINEL_PASSWORD),
    });
    expect(await cli.exited, cli.output()).toBe(0);
    expect((JSON.parse(cli.stdout()) as { runId: string }[]).map((kept) => kept.runId)).toEqual([run.runId]);
  });

  it('refuse a wrong password without the command printing either password', async () => {
    const wrong = 'wrong-password-51e0';
    const cli = startCli(['history', '--json'], {
      ...sentinels.current.environment,
      ...tls(),
      NIGHTSHIFT_REDIS_PASSWORD: wrong,
      NIGHTSHIFT_REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
      NIGHTSHIFT_LOG_LEVEL: 'debug',
    });
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toContain('refused: WRONGPASS');
    for (const secret of [wrong, PASSWORD, SENTINEL_PASSWORD])
      expect(cli.output(), cli.output()).not.toContain(secret);
  });
});
