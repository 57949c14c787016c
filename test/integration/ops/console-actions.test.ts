import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { trimListing } from '../../../src/engine/index.js';
import {
  type ConsoleControl,
  type ConsoleSources,
  Metrics,
  type OpsServer,
  PrincipalDirectory,
  startOpsServer,
  tokenHash,
} from '../../../src/ops/index.js';
import { checkPolicy } from '../../../src/policy/index.js';
import { startSimulator } from '../../../src/sim/index.js';
import {
  AuditTrail,
  FindingsLedger,
  fleetStateStores,
  PolicyStore,
  RedisFleetListings,
  RunCancellations,
  RunHistory,
  Suspensions,
  WorkspaceHistory,
} from '../../../src/store/index.js';
import { harnessKeyring } from '../../helpers/engine.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

const VIEWER = 'viewer-token-5f1d0c';
const OPERATOR = 'operator-token-9a7e2b';
const UI_TOKEN = 'ui-token-3c8d';
const POLICY = `version: 1
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

const servers: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function principals(): PrincipalDirectory {
  return new PrincipalDirectory([
    { name: 'vera', role: 'viewer', token: tokenHash(VIEWER) },
    { name: 'otto', role: 'operator', token: tokenHash(OPERATOR) },
  ]);
}

/** The console on a prefix of its own, with the stores it reads and changes, and a listing of a small fleet. */
async function serve(access: { principals?: PrincipalDirectory; token?: string; localUser?: string }) {
  const prefix = uniquePrefix('console-actions');
  const state = fleetStateStores(redis, prefix);
  const policies = new PolicyStore(redis, { prefix, keyring: harnessKeyring() });
  await policies.setCurrent(await policies.put(POLICY), { host: 'test' });
  const sim = await startSimulator({ port: 0, seed: 3, fleet: { workgroups: 2, workspacesPerWorkgroup: 3 } });
  const listings = new RedisFleetListings(redis, { prefix });
  await listings.save({
    at: new Date().toISOString(),
    runId: 'listing@1',
    job: 'nightly-pause',
    workgroups: trimListing(
      sim.state.workgroups.map((wg) => ({
        ...wg,
        workspaces: sim.state.workspaces.filter((ws) => ws.workgroup_id === wg.workgroup_id),
      })),
    ),
  });
  await sim.close();
  const audit = new AuditTrail(redis, { prefix });
  const sources: ConsoleSources = {
    history: new RunHistory(redis, { prefix }),
    policies,
    suspensions: new Suspensions(redis, { prefix }),
    state,
    listings,
    findings: new FindingsLedger(redis, { prefix }),
    timeline: new WorkspaceHistory(redis, { prefix }),
    audit,
    inProgress: async () => undefined,
    readPolicy: (text, sha) =>
      checkPolicy(text, sha, { registry: actionRegistry, env: {}, unsetVariables: 'warning' }).policy ??
      'unreadable',
  };
  const control: ConsoleControl = {
    holds: state.holds,
    suspensions: sources.suspensions as Suspensions,
    cancellations: new RunCancellations(redis, { prefix }),
    queued: async () => undefined,
    audit,
  };
  const server = await startOpsServer({
    port: 0,
    redis,
    metrics: new Metrics({ processMetrics: false }),
    console: { sources, control, readTimeoutMs: 2_000 },
    ...access,
  });
  servers.push(server);
  return { url: server.url, audit, state, workgroup: sim.state.workgroups[0]?.name as string };
}

/** Signs in with the form; the session cookie and the CSRF token the pages' forms carry. */
async function signIn(url: string, token: string): Promise<{ cookie: string; csrf: string }> {
  const login = await fetch(`${url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
    body: new URLSearchParams({ token }),
  });
  expect(login.status).toBe(303);
  const setCookie = login.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/HttpOnly/);
  expect(setCookie).toMatch(/SameSite=Strict/);
  expect(setCookie).toMatch(/Path=\//);
  expect(setCookie).not.toMatch(/Secure/);
  const cookie = setCookie.split(';')[0] as string;
  const page = await (await fetch(`${url}/holds`, { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] as string;
  return { cookie, csrf };
}

function post(
  url: string,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'sec-fetch-site': 'same-origin',
      ...headers,
    },
    body: new URLSearchParams(fields),
  });
}

describe('the console forms behind roles, a session and CSRF', () => {
  it('a viewer sees no action form and a POST of theirs answers 403, not a redirect', async () => {
    const { url, audit, workgroup } = await serve({ principals: principals() });
    const { cookie, csrf } = await signIn(url, VIEWER);
    const page = await (await fetch(`${url}/holds`, { headers: { cookie } })).text();
    expect(page).toContain('vera');
    expect(page).not.toContain('data-action=');
    expect(page).not.toContain('Place a hold');
    const hold = { pattern: `${workgroup}/*`, state: 'active', for: '2h', reason: 'demo' };
    const refused = await post(url, '/holds', { ...hold, csrf }, { cookie });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('vera is a viewer: this needs the operator role');
    const bearer = await post(url, '/holds', hold, { authorization: `Bearer ${VIEWER}` });
    expect(bearer.status).toBe(403);
    expect(await audit.list()).toEqual([]);
  });

  it('refuses an operator form without its CSRF token, with a wrong one, or from another site (403)', async () => {
    const { url, audit, workgroup } = await serve({ principals: principals() });
    const { cookie, csrf } = await signIn(url, OPERATOR);
    expect(csrf).toBeTruthy();
    const hold = { pattern: `${workgroup}/*`, state: 'active', for: '2h', reason: 'demo' };
    expect((await post(url, '/holds', hold, { cookie })).status).toBe(403);
    expect((await post(url, '/holds', { ...hold, csrf: `${csrf}x` }, { cookie })).status).toBe(403);
    const crossSite = await post(
      url,
      '/holds',
      { ...hold, csrf },
      { cookie, 'sec-fetch-site': 'cross-site' },
    );
    expect(crossSite.status).toBe(403);
    const otherOrigin = await fetch(`${url}/holds`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie,
        origin: 'https://evil.example',
      },
      body: new URLSearchParams({ ...hold, csrf }),
    });
    expect(otherOrigin.status).toBe(403);
    expect(await audit.list()).toEqual([]);
  });

  it('an operator places a hold: it is in force, and the audit trail names the principal and `console 127.0.0.1`', async () => {
    const { url, audit, state, workgroup } = await serve({ principals: principals() });
    const { cookie, csrf } = await signIn(url, OPERATOR);
    const preview = await (
      await fetch(
        `${url}/holds/preview?${new URLSearchParams({ pattern: `${workgroup}/*`, state: 'active', for: '2h', reason: 'demo' })}`,
        {
          headers: { cookie },
        },
      )
    ).text();
    expect(preview).toContain('matches 3 workspaces');
    const placed = await post(
      url,
      '/holds',
      { pattern: `${workgroup}/*`, state: 'active', for: '2h', reason: 'demo', csrf },
      { cookie },
    );
    expect(placed.status).toBe(303);
    expect(placed.headers.get('location')).toBe('/holds');
    const after = await (await fetch(`${url}/holds`, { headers: { cookie } })).text();
    expect(after).toContain(`Held ${workgroup}/* active until`);
    expect((await state.holds.active(new Date())).map((h) => [h.pattern, h.by])).toEqual([
      [`${workgroup}/*`, 'otto'],
    ]);
    const [entry] = await audit.list();
    expect(entry).toMatchObject({
      who: 'otto',
      where: 'console 127.0.0.1',
      action: 'hold',
      subject: `${workgroup}/*`,
      why: 'demo',
    });

    // a bearer request carries no ambient credential: no CSRF token, the outcome as JSON
    const released = await post(
      url,
      '/holds/release',
      { pattern: `${workgroup}/*` },
      { authorization: `Bearer ${OPERATOR}` },
    );
    expect(released.status).toBe(200);
    expect(await released.json()).toMatchObject({ ok: true });
    expect((await audit.list())[0]).toMatchObject({ who: 'otto', action: 'release' });
    const suspended = await post(
      url,
      '/jobs/nightly-pause/suspend',
      { reason: 'freeze', for: '1d' },
      { authorization: `Bearer ${OPERATOR}` },
    );
    expect(await suspended.json()).toMatchObject({ ok: true });
    const unknown = await post(url, '/jobs/no-such-job/suspend', {}, { authorization: `Bearer ${OPERATOR}` });
    expect(unknown.status).toBe(400);
  });

  it('signs in only with a known token, sends a page request without one to /login, and signing out ends the session', async () => {
    const { url } = await serve({ principals: principals() });
    expect((await post(url, '/login', { token: 'not-a-token' })).status).toBe(401);
    const anonymous = await fetch(`${url}/`, { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/login');
    expect((await fetch(`${url}/api/schedules`)).status).toBe(401);
    expect((await fetch(`${url}/login`)).status).toBe(200);
    // /metrics answers a principal's bearer token
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${VIEWER}` } })).status).toBe(
      200,
    );
    const { cookie, csrf } = await signIn(url, OPERATOR);
    expect((await post(url, '/logout', { csrf }, { cookie })).status).toBe(303);
    expect((await fetch(`${url}/api/schedules`, { headers: { cookie } })).status).toBe(401);
  });

  it('keeps NIGHTSHIFT_UI_TOKEN a viewer of the console: it reads every page and changes nothing', async () => {
    const { url } = await serve({ principals: principals(), token: UI_TOKEN });
    const auth = { authorization: `Bearer ${UI_TOKEN}` };
    expect((await fetch(`${url}/`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${url}/metrics`, { headers: auth })).status).toBe(200);
    expect((await post(url, '/jobs/nightly-pause/suspend', {}, auth)).status).toBe(403);
  });

  it('on loopback without tokens is read-only, unless the local user is let act, who then does with a session of the first page', async () => {
    const readOnly = await serve({});
    expect((await post(readOnly.url, '/jobs/nightly-pause/suspend', {})).status).toBe(403);
    expect(await (await fetch(`${readOnly.url}/`)).text()).not.toContain('data-action=');

    const local = await serve({ localUser: 'ana' });
    const first = await fetch(`${local.url}/`);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await first.text())?.[1] as string;
    expect(csrf).toBeTruthy();
    expect((await post(local.url, '/jobs/nightly-pause/suspend', {})).status).toBe(403);
    const suspended = await post(
      local.url,
      '/jobs/nightly-pause/suspend',
      { csrf, reason: 'freeze' },
      { cookie },
    );
    expect(suspended.status).toBe(303);
    expect((await local.audit.list())[0]).toMatchObject({
      who: 'ana',
      where: 'console 127.0.0.1',
      action: 'suspend',
    });
  });
});
