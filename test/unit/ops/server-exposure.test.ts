import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { Metrics, type Readiness } from '../../../src/ops/index.js';
import { opsApp } from '../../../src/ops/server.js';
import { expectSecurityHeaders } from '../../helpers/ops-headers.js';

/** A Redis that never connected: /readyz reports it failing, which is what these tests read. */
const redis = { status: 'wait' } as unknown as Redis;
const TOKEN = 'exposure-token-3f1e';
const POLICY_PATH = '/config/policy.yaml';
const PROBLEM = `${POLICY_PATH}:9:15: jobs.nightly-pause.schedule: invalid cron expression "61 20 * * *"`;

const degradedPolicy: Readiness = {
  ok: true,
  degraded: true,
  reason: `the last edit of ${POLICY_PATH} was rejected`,
  problems: [PROBLEM],
};

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function app(token?: string): Promise<FastifyInstance> {
  const made = await opsApp({
    redis,
    metrics: new Metrics({ processMetrics: false }),
    ready: () => ({ policy: degradedPolicy }),
    ...(token ? { token } : {}),
  });
  apps.push(made);
  return made;
}

const FROM_ELSEWHERE = '203.0.113.9';

describe('/readyz', () => {
  it('tells a client beyond loopback without the token its status only: no policy path, no problem', async () => {
    const server = await app(TOKEN);
    const answer = await server.inject({ url: '/readyz', remoteAddress: FROM_ELSEWHERE });
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toEqual({ ready: false, degraded: ['policy'], failing: ['redis'] });
    expect(answer.body).not.toContain(POLICY_PATH);
    expect(answer.body).not.toContain('cron');
  });

  it('tells the same client with the token every check, its reason and its problems', async () => {
    const server = await app(TOKEN);
    const answer = await server.inject({
      url: '/readyz',
      remoteAddress: FROM_ELSEWHERE,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({
      ready: false,
      failing: ['redis'],
      checks: { redis: { ok: false, reason: expect.any(String) }, policy: degradedPolicy },
    });
    // a wrong token is no token
    const wrong = await server.inject({
      url: '/readyz',
      remoteAddress: FROM_ELSEWHERE,
      headers: { authorization: 'Bearer not-the-token' },
    });
    expect(wrong.json()).not.toHaveProperty('checks');
  });

  it('tells a client on loopback every check, with or without a token, IPv4 as IPv6 reports it too', async () => {
    for (const remoteAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      const server = await app(TOKEN);
      const answer = await server.inject({ url: '/readyz', remoteAddress });
      expect(answer.json(), remoteAddress).toMatchObject({ checks: { policy: { problems: [PROBLEM] } } });
    }
  });
});

describe('every answer of the ops server', () => {
  it('forbids sniffing, framing and referrers, and carries a Content-Security-Policy: probes, metrics, refusals, unknown paths', async () => {
    const server = await app(TOKEN);
    const requests = [
      { url: '/healthz', status: 200 },
      { url: '/readyz', status: 503 },
      { url: '/metrics', status: 401 },
      { url: '/metrics', status: 200, headers: { authorization: `Bearer ${TOKEN}` } },
      { url: '/nothing-here', status: 404 },
    ];
    for (const { url, status, headers } of requests) {
      const answer = await server.inject({
        url,
        remoteAddress: FROM_ELSEWHERE,
        ...(headers ? { headers } : {}),
      });
      expect(answer.statusCode, url).toBe(status);
      expectSecurityHeaders((name) => answer.headers[name], url);
      expect(answer.headers['content-security-policy'], url).toBe(
        "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
    }
  });
});
