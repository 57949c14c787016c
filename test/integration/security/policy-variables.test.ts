// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, startCli } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';

// Distinctive values, so a leak cannot hide behind a common substring.
const API_KEY_VALUE = 'k-Vd83pQm2';

let dir: string;
let redis: TestRedis;

beforeAll(async () => {
  assertBuilt('src/policy/interpolate.ts', 'src/policy/own-variables.ts', 'src/config/schema.ts');
  dir = mkdtempSync(join(tmpdir(), 'nightshift-policy-variables-'));
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function policyFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('a policy cannot read nightshift’s own credentials', () => {
  const file = () =>
    policyFile(
      'own.yaml',
      `version: 1
notifications:
  ops: { url: "https://hooks.example.com/\${NIGHTSHIFT_API_KEY}" }
jobs:
  pause-dev:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["dev-*", "\${NIGHTSHIFT_API_KEY}"], workspaces: ["x-\${REDIS_URL}"] }
    notify: [ops]
`,
    );
  const refusal = (name: string) =>
    `environment variable ${name} is one of nightshift's own settings, which a policy may not read; to let policies read it, add it to NIGHTSHIFT_POLICY_ENV_ALLOW where nightshift runs`;

  it('validate refuses ${NIGHTSHIFT_API_KEY} in a webhook URL and a target, and ${REDIS_URL}, at their places: exit 2', async () => {
    const policy = file();
    const cli = startCli(['validate', policy], { NIGHTSHIFT_API_KEY: API_KEY_VALUE, REDIS_URL: redis.url });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(
      [
        `${policy}:3:15: notifications.ops.url: ${refusal('NIGHTSHIFT_API_KEY')}`,
        `${policy}:8:37: jobs.pause-dev.target.workgroups[1]: ${refusal('NIGHTSHIFT_API_KEY')}`,
        `${policy}:8:76: jobs.pause-dev.target.workspaces[0]: ${refusal('REDIS_URL')}`,
        '',
      ].join('\n'),
    );
    expect(cli.output()).not.toContain(API_KEY_VALUE);
  });

  it('reads them once NIGHTSHIFT_POLICY_ENV_ALLOW names them', async () => {
    const cli = startCli(['validate', file()], {
      NIGHTSHIFT_API_KEY: API_KEY_VALUE,
      REDIS_URL: redis.url,
      NIGHTSHIFT_POLICY_ENV_ALLOW: 'NIGHTSHIFT_API_KEY, REDIS_URL',
    });
    expect(await cli.exited).toBe(0);
  });

  it('refuses an allow list that is not variable names, naming the setting: exit 2', async () => {
    const cli = startCli(['validate', file()], { NIGHTSHIFT_POLICY_ENV_ALLOW: 'REDIS_URL,NIGHTSHIFT_*' });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain(
      'NIGHTSHIFT_POLICY_ENV_ALLOW must be variable names separated by commas (e.g. NIGHTSHIFT_BEARER_TOKEN,REDIS_URL), got "NIGHTSHIFT_*"',
    );
  });
});
