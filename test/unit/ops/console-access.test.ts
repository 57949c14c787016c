import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { type Access, crossSite, postProblem } from '../../../src/ops/access/gate.js';
import { SessionStore } from '../../../src/ops/access/sessions.js';
import {
  CONSOLE_ACTIONS,
  type ConsoleAction,
  may,
  newConsoleToken,
  readPrincipals,
  TokensFileError,
  tokenHash,
} from '../../../src/ops/index.js';

const ANA = newConsoleToken();
const BO = newConsoleToken();

describe('the console tokens file', () => {
  it('reads principals from YAML and from JSON, and finds each by its token, none by a near miss', () => {
    const yaml = readPrincipals(
      `principals:\n  - { name: ana, role: operator, token: "${ANA.hash}" }\n  - name: bo\n    role: viewer\n    token: ${BO.hash}\n`,
      'tokens.yaml',
    );
    expect(yaml.size).toBe(2);
    expect(yaml.find(ANA.token)).toEqual({ name: 'ana', role: 'operator' });
    expect(yaml.find(BO.token)).toEqual({ name: 'bo', role: 'viewer' });
    expect(yaml.find(`${ANA.token}x`)).toBeUndefined();
    expect(yaml.find(ANA.hash)).toBeUndefined();
    const json = readPrincipals(
      JSON.stringify({ principals: [{ name: 'ana', role: 'approver', token: ANA.hash }] }),
      'tokens.json',
    );
    expect(json.find(ANA.token)).toEqual({ name: 'ana', role: 'approver' });
  });

  it('names the file and every bad entry at once: a plain token, an unknown role, a repeated name or hash', () => {
    const text = `principals:
  - { name: ana, role: operator, token: "${ANA.hash}" }
  - { name: bo, role: admin, token: "${BO.hash}" }
  - { name: cy, role: viewer, token: "${ANA.token}" }
  - { name: ana, role: viewer, token: "${tokenHash('another')}" }
  - { name: dee, role: viewer, token: "${ANA.hash}" }
  - { role: viewer, token: "${tokenHash('x')}" }
`;
    let message = '';
    try {
      readPrincipals(text, '/etc/nightshift/tokens.yaml');
    } catch (error) {
      expect(error).toBeInstanceOf(TokensFileError);
      message = (error as Error).message;
    }
    expect(message).toMatch(/^\/etc\/nightshift\/tokens\.yaml: /);
    expect(message).toContain('principals[1] (bo).role:');
    expect(message).toContain('principals[2] (cy).token: must be "sha256:" and 64 hex digits');
    expect(message).toContain('principals[3] (ana): the name is taken by an earlier entry');
    expect(message).toContain('principals[4] (dee): the same token hash as an earlier entry');
    expect(message).toContain('principals[5].name:');
    // the plain token given by mistake is not repeated in the message
    expect(message).not.toContain(ANA.token);
  });

  it('refuses a file that is not a list of principals, or lists none', () => {
    expect(() => readPrincipals('- ana', 'tokens.yaml')).toThrow(/tokens\.yaml: expected \{ principals/);
    expect(() => readPrincipals('principals: [', 'tokens.yaml')).toThrow(/tokens\.yaml: not YAML or JSON/);
    expect(() => readPrincipals('principals: []', 'tokens.yaml')).toThrow('tokens.yaml: no principal');
  });

  it('makes tokens of 256 random bits, each hashed as the file keeps it', () => {
    expect(ANA.token).toMatch(/^nsc_[A-Za-z0-9_-]{43}$/);
    expect(ANA.hash).toBe(tokenHash(ANA.token));
    expect(ANA.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(ANA.token).not.toBe(BO.token);
  });
});

describe('roles', () => {
  it('include each other: a viewer changes nothing, an operator all but approvals, an approver everything', () => {
    const actions = Object.keys(CONSOLE_ACTIONS) as ConsoleAction[];
    expect(actions.filter((action) => may('viewer', action))).toEqual([]);
    expect(actions.filter((action) => may('operator', action))).toEqual([
      'hold',
      'release',
      'suspend',
      'unsuspend',
      'cancel',
      'run',
    ]);
    expect(actions.filter((action) => may('approver', action))).toEqual(actions);
  });
});

describe('sessions', () => {
  it('end after their idle time, after their whole lifetime however used, and when signed out', () => {
    let now = 0;
    const sessions = new SessionStore({ idleMs: 1_000, maxAgeMs: 5_000, now: () => now });
    const idle = sessions.create({ name: 'ana', role: 'operator' });
    now = 1_000;
    expect(sessions.get(idle.id)).toBeUndefined();
    const used = sessions.create({ name: 'ana', role: 'operator' });
    for (now = 1_500; now < 6_000; now += 500) expect(sessions.get(used.id)?.principal.name).toBe('ana');
    now = 6_000;
    expect(sessions.get(used.id)).toBeUndefined();
    const ended = sessions.create({ name: 'bo', role: 'viewer' });
    sessions.end(ended.id);
    expect(sessions.get(ended.id)).toBeUndefined();
  });

  it('keep at most their number, ending the oldest, each with its own id and CSRF token', () => {
    const sessions = new SessionStore({ maxSessions: 2 });
    const [a, b, c] = ['a', 'b', 'c'].map((name) => sessions.create({ name, role: 'viewer' }));
    expect(sessions.get(a?.id ?? '')).toBeUndefined();
    expect(sessions.get(b?.id ?? '')?.principal.name).toBe('b');
    expect(sessions.get(c?.id ?? '')?.principal.name).toBe('c');
    expect(new Set([b?.id, b?.csrf, c?.id, c?.csrf]).size).toBe(4);
  });
});

function request(headers: Record<string, string>): FastifyRequest {
  return { headers: { host: '127.0.0.1:9464', ...headers } } as unknown as FastifyRequest;
}

describe('CSRF', () => {
  const sessions = new SessionStore();
  const session = sessions.create({ name: 'ana', role: 'operator' });
  const signedIn: Access = { principal: session.principal, via: 'session', session };
  const sameSite = request({ 'sec-fetch-site': 'same-origin' });

  it('lets a form through with its session token from the same site, and nothing else', () => {
    expect(postProblem(sameSite, signedIn, session.csrf, 'operator')).toBeUndefined();
    expect(postProblem(sameSite, signedIn, undefined, 'operator')).toMatch(/CSRF token/);
    expect(postProblem(sameSite, signedIn, `${session.csrf}x`, 'operator')).toMatch(/CSRF token/);
    const other = sessions.create({ name: 'bo', role: 'operator' });
    expect(postProblem(sameSite, signedIn, other.csrf, 'operator')).toMatch(/CSRF token/);
    const noSession: Access = { principal: session.principal, via: 'local' };
    expect(postProblem(sameSite, noSession, session.csrf, 'operator')).toMatch(/sign in first/);
  });

  it('refuses a form sent from another site, by Sec-Fetch-Site or, without it, by Origin against Host', () => {
    expect(crossSite(request({ 'sec-fetch-site': 'cross-site' }))).toBe(true);
    expect(crossSite(request({ 'sec-fetch-site': 'same-site' }))).toBe(true);
    expect(crossSite(request({ 'sec-fetch-site': 'none' }))).toBe(false);
    expect(crossSite(request({ origin: 'http://127.0.0.1:9464' }))).toBe(false);
    expect(crossSite(request({ origin: 'https://evil.example' }))).toBe(true);
    expect(crossSite(request({ origin: 'null' }))).toBe(true);
    expect(crossSite(request({}))).toBe(false);
    const forged = request({ 'sec-fetch-site': 'cross-site' });
    expect(postProblem(forged, signedIn, session.csrf, 'operator')).toMatch(/another site/);
  });

  it('checks the role first, and lets a bearer request go without a CSRF token: a browser never sends one by itself', () => {
    const viewer: Access = { principal: { name: 'vi', role: 'viewer' }, via: 'bearer' };
    expect(postProblem(sameSite, viewer, undefined, 'operator')).toBe(
      'vi is a viewer: this needs the operator role',
    );
    const operator: Access = { principal: { name: 'op', role: 'operator' }, via: 'bearer' };
    expect(postProblem(request({}), operator, undefined, 'operator')).toBeUndefined();
  });
});
