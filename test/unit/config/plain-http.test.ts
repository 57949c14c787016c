// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { ConfigError, loadSettings } from '../../../src/config/index.js';
import { checkPolicy, formatProblem } from '../../../src/policy/index.js';

/**
 * Plain http:// carries the API key and a webhook's secret URL in the clear: beyond loopback it
 * needs NIGHTSHIFT_ALLOW_INSECURE_HTTP=true, and the refusal names where, the scheme and the host,
 * never the rest of the URL.
 */

const LOOPBACK_URLS = [
  'http://127.0.0.1:8787',
  'http://127.0.0.9/x',
  'http://localhost:9',
  'http://[::1]:8787',
];

describe('NIGHTSHIFT_API_URL', () => {
  it('refuses plain http:// beyond loopback, naming the variable, the host and the way out', () => {
    const refused = () => loadSettings({ NIGHTSHIFT_API_URL: 'http://api.example.com/v1?key=k-secret' });
    expect(refused).toThrow(ConfigError);
    expect(refused).toThrow(
      'NIGHTSHIFT_API_URL is plain http:// to api.example.com, beyond loopback: the API key would cross the network unencrypted; use https://, or set NIGHTSHIFT_ALLOW_INSECURE_HTTP=true to allow it',
    );
    expect(() => loadSettings({ NIGHTSHIFT_API_URL: 'http://10.0.0.7:8787' })).toThrow(/to 10\.0\.0\.7,/);
  });

  it('takes https:// anywhere, http:// on loopback, and http:// anywhere with the opt-in', () => {
    for (const url of ['https://api.example.com', ...LOOPBACK_URLS])
      expect(loadSettings({ NIGHTSHIFT_API_URL: url }).api.url, url).toBe(url);
    expect(
      loadSettings({ NIGHTSHIFT_API_URL: 'http://sim:8787', NIGHTSHIFT_ALLOW_INSECURE_HTTP: 'true' }).api.url,
    ).toBe('http://sim:8787');
  });

  it('refuses an opt-in that is neither true nor false, and false allows nothing', () => {
    expect(() => loadSettings({ NIGHTSHIFT_ALLOW_INSECURE_HTTP: 'yes' })).toThrow(
      'NIGHTSHIFT_ALLOW_INSECURE_HTTP must be one of true, false, got "yes"',
    );
    expect(() =>
      loadSettings({ NIGHTSHIFT_API_URL: 'http://sim:8787', NIGHTSHIFT_ALLOW_INSECURE_HTTP: 'false' }),
    ).toThrow(/plain http:\/\/ to sim/);
  });
});

const SECRET_PATH = '/services/T000/B000/s3cr3t-path';

function policyWithWebhook(url: string): string {
  return `version: 1
notifications:
  ops:
    url: "${url}"
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    notify: [ops]
`;
}

function problemsOf(text: string, env: Record<string, string> = {}): string[] {
  return checkPolicy(text, 'policy.yaml', { registry: actionRegistry, env }).problems.map(formatProblem);
}

describe('a webhook URL in the policy', () => {
  it('is refused as plain http:// beyond loopback at its file:line:col, naming the host and never its path', () => {
    const problems = problemsOf(policyWithWebhook(`http://hooks.example.com${SECRET_PATH}`));
    expect(problems).toEqual([
      "policy.yaml:4:10: notifications.ops.url: plain http:// to hooks.example.com, beyond loopback: the webhook's URL and every message would cross the network unencrypted; use https://, or set NIGHTSHIFT_ALLOW_INSECURE_HTTP=true to allow it",
    ]);
  });

  it('is refused so when it comes from a variable too, still without its value', () => {
    const problems = problemsOf(policyWithWebhook('${OPS_WEBHOOK}'), {
      OPS_WEBHOOK: `http://hooks.example.com${SECRET_PATH}`,
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^policy\.yaml:4:10: notifications\.ops\.url: plain http:\/\/ to hooks\.example\.com,/,
    );
    expect(problems.join('\n')).not.toContain('s3cr3t');
  });

  it('is taken as https:// anywhere, http:// on loopback, and http:// anywhere with the opt-in', () => {
    for (const url of [`https://hooks.example.com${SECRET_PATH}`, ...LOOPBACK_URLS])
      expect(problemsOf(policyWithWebhook(url)), url).toEqual([]);
    expect(
      problemsOf(policyWithWebhook(`http://hooks.example.com${SECRET_PATH}`), {
        NIGHTSHIFT_ALLOW_INSECURE_HTTP: 'true',
      }),
    ).toEqual([]);
  });
});
