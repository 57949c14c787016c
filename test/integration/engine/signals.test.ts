import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../src/store/local-server.js';
import { assertBuilt, eventually, startCli } from '../../helpers/engine.js';

const POLICY = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

function policyFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'nightshift-signals-')), 'policy.yaml');
  writeFileSync(file, POLICY);
  return file;
}

const API = { NIGHTSHIFT_API_URL: 'http://127.0.0.1:9', NIGHTSHIFT_API_KEY: 'k' };

describe('services and signals', () => {
  it.each([
    ['scheduler', (file: string) => ['scheduler', file]],
    ['start', (file: string) => ['start', file]],
  ])(
    '%s started while Redis is unreachable stops on SIGTERM, exit 0, instead of waiting for Redis',
    async (_, args) => {
      assertBuilt();
      const cli = startCli(args(policyFile()), {
        ...API,
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        NIGHTSHIFT_SHUTDOWN_GRACE_MS: '1000',
      });
      await eventually('the outage reported', () => cli.output().includes('Redis unreachable'), 10_000);
      cli.child.kill('SIGHUP');
      await sleep(300);
      expect(cli.child.exitCode, 'SIGHUP before the policy is loaded must not end it').toBeNull();
      const started = Date.now();
      expect(await cli.stop('SIGTERM'), cli.output()).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(cli.output()).not.toMatch(/\n\s+at /);
    },
  );

  it('a worker ignores SIGHUP (nothing to reload) and stops on SIGTERM with exit 0', async () => {
    assertBuilt();
    const cli = startCli(['worker'], {
      ...API,
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      NIGHTSHIFT_SHUTDOWN_GRACE_MS: '500',
    });
    await eventually('the worker started', () => cli.output().includes('worker started'), 10_000);
    cli.child.kill('SIGHUP');
    await sleep(300);
    expect(cli.child.exitCode).toBeNull();
    expect(await cli.stop('SIGTERM'), cli.output()).toBe(0);
  });
});
