import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt, startCli } from '../../helpers/engine.js';

const POLICY = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

describe('a bad setting in the environment', () => {
  it('stops a command before it does anything: exit 2, naming the variable, the problem and what was expected', async () => {
    assertBuilt();
    const file = join(mkdtempSync(join(tmpdir(), 'nightshift-bad-setting-')), 'policy.yaml');
    writeFileSync(file, POLICY);
    const cli = startCli(['validate', file], {
      NIGHTSHIFT_WORKER_CONCURRENCY: 'lots',
      NIGHTSHIFT_LOG_FORMAT: 'xml',
    });
    expect(await cli.exited).toBe(2);
    expect(cli.stdout()).toBe('');
    expect(cli.stderr()).toBe(
      'nightshift: NIGHTSHIFT_WORKER_CONCURRENCY must be a positive number, got "lots"; NIGHTSHIFT_LOG_FORMAT must be one of json, pretty, got "xml"\n',
    );
  });

  it('still shows the help and the version, which read no setting, with exit 0', async () => {
    for (const args of [['--help'], ['start', '--help'], ['--version']]) {
      const cli = startCli(args, { NIGHTSHIFT_WORKER_CONCURRENCY: 'lots' });
      expect(await cli.exited, args.join(' ')).toBe(0);
      expect(cli.stdout(), args.join(' ')).toMatch(
        args[0] === '--version' ? /^\d+\.\d+\.\d+/ : /^Usage: nightshift/,
      );
    }
  });
});

describe('two Redis topologies at once', () => {
  it('stop a service before it connects anywhere: exit 2, naming both variables and never the password', async () => {
    assertBuilt();
    const cli = startCli(['worker'], {
      REDIS_URL: 'redis://127.0.0.1:1',
      NIGHTSHIFT_REDIS_CLUSTER_NODES: '127.0.0.1:2,127.0.0.1:3',
      NIGHTSHIFT_REDIS_PASSWORD: 'not-in-any-message',
    });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain(
      'REDIS_URL and NIGHTSHIFT_REDIS_CLUSTER_NODES are both set; set only one of them',
    );
    expect(cli.output()).not.toContain('not-in-any-message');
  });
});
