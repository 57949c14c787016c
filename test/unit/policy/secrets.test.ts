// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { describe, expect, it } from 'vitest';
import { hideSecrets, type LoadPolicyOptions, parsePolicy, SECRET_NAME } from '../../../src/policy/index.js';
import { testRegistry } from '../../fixtures/policies/test-registry.js';

const ENV = {
  DB_PASSWORD: 'pw-5Tq8Ld2x',
  api_token: 'tok-7Hc2Wq9e',
  SIGNING_KEY: 'key-3Mz6Ra1v',
  OPS_HOOK: 'https://hooks.example.com/T0-9Xv4',
  TEAM: 'dev',
  CUSTOMER: 'acme-corp-eu',
  NIGHTSHIFT_BEARER_TOKEN: 'bearer-8Kp3Ys5n',
};

function load(text: string, options: Partial<LoadPolicyOptions> = {}) {
  return parsePolicy(`version: 1\n${text}`, 'policy.yaml', { registry: testRegistry, env: ENV, ...options });
}

describe('which values are secrets', () => {
  it.each([
    ['DB_PASSWORD', true],
    ['db_passwd', true],
    ['GPG_PASSPHRASE', true],
    ['CLIENT_SECRET', true],
    ['api_token', true],
    ['SIGNING_KEY', true],
    ['AWS_CREDENTIALS', true],
    ['BASIC_AUTH', true],
    ['SLACK_WEBHOOK', true],
    ['DRILL_BACKUP_ID', false],
    ['TEAM', false],
    ['SINK_PATH', false],
  ])('by its name: %s is %s', (name, secret) => {
    expect(SECRET_NAME.test(name)).toBe(secret);
  });

  it('takes the ones named like a secret, listed under secrets:, read by a notification url or allowed from nightshift’s own; no other', () => {
    const policy = load(
      `secrets: [CUSTOMER]
notifications:
  ops: { url: "\${OPS_HOOK}" }
targets:
  team: { workgroups: ["\${TEAM}-*", "\${CUSTOMER}"] }
jobs:
  pause:
    schedule: "0 20 * * *"
    action: pause
    target: team
    description: "\${DB_PASSWORD} \${api_token} \${SIGNING_KEY} \${NIGHTSHIFT_BEARER_TOKEN} \${MISSING_SECRET:-}"
`,
      { allowEnv: ['NIGHTSHIFT_BEARER_TOKEN'] },
    );
    expect(policy.secrets.map(({ name }) => name).sort()).toEqual([
      'CUSTOMER',
      'DB_PASSWORD',
      'NIGHTSHIFT_BEARER_TOKEN',
      'OPS_HOOK',
      'SIGNING_KEY',
      'api_token',
    ]);
    expect(policy.secrets.find(({ name }) => name === 'OPS_HOOK')?.value).toBe(ENV.OPS_HOOK);
  });

  it('counts a webhook URL’s variable a secret wherever else it is used', () => {
    const policy = load(`notifications:
  ops: { url: "\${OPS_HOOK}" }
jobs:
  pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    description: "posts to \${OPS_HOOK}"
`);
    const hide = hideSecrets(policy.secrets);
    expect(hide(policy.jobs[0]?.description)).toBe('posts to ${OPS_HOOK}');
  });

  it('hides a secret in a problem that quotes what it refused (an action’s own schema)', () => {
    const text = `jobs:
  audit:
    schedule: "0 6 * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
    with: { forbid: ["\${CIDR_SECRET}", "\${CIDR}"] }
`;
    expect(() => load(text, { env: { ...ENV, CIDR_SECRET: '10.1.2.3/99', CIDR: '10.9.9.9/77' } })).toThrow(
      [
        'policy.yaml:7:22: jobs.audit.with.forbid[0]: "${CIDR_SECRET}" has prefix length "99"; expected 0-32',
        'policy.yaml:7:40: jobs.audit.with.forbid[1]: "10.9.9.9/77" has prefix length "77"; expected 0-32',
      ].join('\n'),
    );
  });

  it('hides a secret with a default as its reference, and shows the values of the others', () => {
    const policy = load(`jobs:
  drill:
    schedule: "0 3 * * 0"
    action: drill
    with: { workgroup: "\${TEAM}", workspace: "\${WS_SECRET:-drill-workspace}", backupId: "\${CUSTOMER}-1" }
`);
    const hide = hideSecrets(policy.secrets);
    expect(hide(policy.jobs[0]?.params)).toEqual({
      workgroup: 'dev',
      workspace: '${WS_SECRET}',
      backupId: 'acme-corp-eu-1',
    });
  });
});
