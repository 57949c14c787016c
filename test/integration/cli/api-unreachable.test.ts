import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/store/local-server.js';
import { assertBuilt, startCli } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis, uniquePrefix } from '../../helpers/redis.js';

const POLICY = `version: 1
windows:
  office:
    target: { workgroups: ["*"] }
    uptime: "Mon-Fri 07:30-19:30"
`;

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis?.stop();
});

function policyFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'nightshift-api-down-')), 'policy.yaml');
  writeFileSync(file, POLICY);
  return file;
}

/** The environment of a command whose API is a port nothing listens on; logging as a person gets it. */
async function apiDown(): Promise<Record<string, string>> {
  return {
    NIGHTSHIFT_API_URL: `http://127.0.0.1:${await freePort()}`,
    NIGHTSHIFT_API_KEY: 'k',
    REDIS_URL: redis.url,
    NIGHTSHIFT_REDIS_PREFIX: uniquePrefix('api-down'),
    NIGHTSHIFT_LOG_LEVEL: '',
    NIGHTSHIFT_LOG_FORMAT: '',
  };
}

const ONE_LINE =
  /^nightshift: (drift|adopt): listWorkgroups GET \/controller\/v4\/v2\/workgroups → Network: [^\n]*ECONNREFUSED[^\n]* \(is NIGHTSHIFT_API_URL right, and the API up\?\)\n$/;

describe('a command whose API does not answer', () => {
  it('drift prints one line naming the operation and the cause, no stack, and exits 1', async () => {
    assertBuilt();
    const cli = startCli(['drift', policyFile()], await apiDown());
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe('');
    expect(cli.stderr()).toMatch(ONE_LINE);
    expect(cli.stderr()).toMatch(/^nightshift: drift: /);
  });

  it('adopt does the same', async () => {
    const cli = startCli(['adopt', 'office', '--policy', policyFile()], await apiDown());
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toMatch(ONE_LINE);
    expect(cli.stderr()).toMatch(/^nightshift: adopt: /);
  });
});
