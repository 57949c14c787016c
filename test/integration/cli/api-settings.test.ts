import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiCredentials, loadSettings } from '../../../src/config/index.js';
import { freePort } from '../../../src/store/local-server.js';
import { assertBuilt, startCli } from '../../helpers/engine.js';

const POLICY = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    retry: { attempts: 1 }
  user-review:
    schedule: "0 6 * * 1"
    action: org-user-review
`;

function policyFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'nightshift-settings-')), 'policy.yaml');
  writeFileSync(file, POLICY);
  return file;
}

const UNSET = {
  NIGHTSHIFT_API_URL: '',
  NIGHTSHIFT_API_KEY: '',
  NIGHTSHIFT_API_KEY_FILE: '',
  NIGHTSHIFT_BEARER_TOKEN: '',
};

describe('missing API settings are reported at start, naming each variable, before anything is scheduled', () => {
  it('start without URL and key: exit 2 naming both, and Redis is never contacted', async () => {
    assertBuilt();
    const cli = startCli(['start', policyFile()], {
      ...UNSET,
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    });
    expect(await cli.exited).toBe(2);
    expect(cli.output()).toBe(
      'nightshift: NIGHTSHIFT_API_URL is not set (the base URL of the management API); NIGHTSHIFT_API_KEY (or NIGHTSHIFT_API_KEY_FILE) is not set\n',
    );
  });

  it('NIGHTSHIFT_API_KEY and NIGHTSHIFT_API_KEY_FILE both set: exit 2, naming both, neither value', async () => {
    const keyFile = join(mkdtempSync(join(tmpdir(), 'nightshift-key-')), 'key');
    writeFileSync(keyFile, 'k-from-file-7Qz\n');
    const cli = startCli(['run', policyFile(), 'nightly-pause', '--inline'], {
      ...UNSET,
      NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
      NIGHTSHIFT_API_KEY: 'k-from-env-3Wx',
      NIGHTSHIFT_API_KEY_FILE: keyFile,
    });
    expect(await cli.exited).toBe(2);
    expect(cli.output()).toBe(
      'nightshift: NIGHTSHIFT_API_KEY and NIGHTSHIFT_API_KEY_FILE are both set; set only one of them\n',
    );
  });

  it('either one alone is enough', () => {
    const keyFile = join(mkdtempSync(join(tmpdir(), 'nightshift-key-')), 'key');
    writeFileSync(keyFile, 'k-from-file\n');
    const url = { NIGHTSHIFT_API_URL: 'https://api.example' };
    const apiKey = (env: Record<string, string>) => apiCredentials(loadSettings(env)).apiKey;
    expect(apiKey({ ...url, NIGHTSHIFT_API_KEY: 'k-env' })).toBe('k-env');
    expect(apiKey({ ...url, NIGHTSHIFT_API_KEY_FILE: keyFile })).toBe('k-from-file');
    expect(apiKey({ ...url, NIGHTSHIFT_API_KEY: 'k-env', NIGHTSHIFT_API_KEY_FILE: '' })).toBe('k-env');
  });

  it('an unreadable NIGHTSHIFT_API_KEY_FILE is named with why', async () => {
    const cli = startCli(['run', policyFile(), 'nightly-pause', '--inline'], {
      ...UNSET,
      NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
      NIGHTSHIFT_API_KEY_FILE: '/nonexistent/key',
    });
    expect(await cli.exited).toBe(2);
    expect(cli.output()).toBe('nightshift: NIGHTSHIFT_API_KEY_FILE cannot be read (ENOENT)\n');
  });

  it.each([
    ['start', (file: string) => ['start', file]],
    ['run --inline', (file: string) => ['run', file, 'user-review', '--inline']],
    ['plan', (file: string) => ['plan', file]],
  ])(
    '%s of a policy with org-user-review and no NIGHTSHIFT_BEARER_TOKEN: exit 2 naming it and the job',
    async (_, args) => {
      assertBuilt();
      const cli = startCli(args(policyFile()), {
        ...UNSET,
        NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
        NIGHTSHIFT_API_KEY: 'k',
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      });
      expect(await cli.exited).toBe(2);
      expect(cli.output()).toBe(
        'nightshift: NIGHTSHIFT_BEARER_TOKEN is not set; job "user-review" (org-user-review) lists organization users, which takes the bearer token, not the API key\n',
      );
    },
  );

  it('a run of a job that needs no bearer token does not ask for one', async () => {
    const cli = startCli(['run', policyFile(), 'nightly-pause', '--inline', '--json'], {
      ...UNSET,
      NIGHTSHIFT_API_URL: 'http://127.0.0.1:9',
      NIGHTSHIFT_API_KEY: 'k',
      NIGHTSHIFT_LOG_LEVEL: 'silent',
      NIGHTSHIFT_API_TIMEOUT_MS: '500',
    });
    // it gets as far as the API (nothing listens there): the run fails, it is not refused
    expect(await cli.exited).toBe(1);
    expect(cli.output()).toContain('"reason": "could not list the fleet"');
  });
});
