import { describe, expect, it } from 'vitest';
import { freePort } from '../../../src/store/local-server.js';
import { assertBuilt, startCli } from '../../helpers/engine.js';

describe('a one-shot command whose Redis topology does not answer', () => {
  it.each([
    [
      'a cluster',
      'NIGHTSHIFT_REDIS_CLUSTER_NODES',
      (a: number, b: number) => ({ NIGHTSHIFT_REDIS_CLUSTER_NODES: `127.0.0.1:${a},127.0.0.1:${b}` }),
    ],
    [
      'Sentinels',
      'NIGHTSHIFT_REDIS_SENTINELS',
      (a: number, b: number) => ({
        NIGHTSHIFT_REDIS_SENTINELS: `127.0.0.1:${a},127.0.0.1:${b}`,
        NIGHTSHIFT_REDIS_SENTINEL_NAME: 'primary',
      }),
    ],
  ])(
    'of %s gives up within seconds (exit 1), naming where it looked and the variable to check',
    async (_, variable, environment) => {
      assertBuilt();
      const environmentVariables = environment(await freePort(), await freePort());
      const started = Date.now();
      const cli = startCli(['history'], environmentVariables);
      expect(await cli.exited, cli.output()).toBe(1);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(cli.stderr()).toContain(`did not answer: is it running, and is ${variable} right?`);
    },
  );
});
