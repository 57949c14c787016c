import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { type ApprovalRecord, summarize, trimListing } from '../../../src/engine/index.js';
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
  Approvals,
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
import { systemClock } from '../../../src/time/index.js';
import { postForm } from '../../helpers/console-forms.js';
import { harnessKeyring } from '../../helpers/engine.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

const VIEWER = 'viewer-token-5f1d0c';
const OPERATOR = 'operator-token-9a7e2b';
const APPROVER = 'approver-token-41c6d8';
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
    { name: 'ada', role: 'approver', token: tokenHash(APPROVER) },
  ]);
}

/** A run of `nightly-pause` waiting for approval, as a worker records it: its plan, its summary. */
async function waitingRun(approvals: Approvals, history: RunHistory, runId: string): Promise<void> {
  const record: ApprovalRecord = {
    runId,
    job: 'nightly-pause',
    action: 'pause',
    trigger: 'manual',
    state: 'pending',
    round: 1,
    requestedAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    approvers: [],
    plan: [{ key: 'wg/ws', name: 'dev/kg', change: 'would pause' }],
    run: { runId, job: 'nightly-pause', policySha: 'a'.repeat(64), trigger: 'manual', dryRun: false },
  };
  await approvals.request(record);
  await history.record({
    ...summarize(
      { runId, job: 'nightly-pause', action: 'pause', trigger: 'manual', dryRun: false },
      { finishedAt: new Date(), outcome: 'awaiting-approval', reason: 'awaiting approval' },
    ),
    approval: { state: 'pending', round: 1, expiresAt: record.expiresAt, approvers: [] },
  });
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
    underWay: async () => [],
    readPolicy: (text, sha) =>
      checkPolicy(text, sha, { registry: actionRegistry, env: {}, unsetVariables: 'warning' }).policy ??
      'unreadable',
  };
  const history = sources.history as RunHistory;
  const approvals = new Approvals(redis, { prefix });
  const queuedApprovals: string[] = [];
  const control: ConsoleControl = {
    holds: state.holds,
    suspensions: sources.suspensions as Suspensions,
    cancellations: new RunCancellations(redis, { prefix }),
    queued: async () => undefined,
    audit,
    approvals,
    queueApproved: async (record) => void queuedApprovals.push(record.runId),
    recordEnded: (summary) => history.record(summary),
    clock: systemClock,
  };
  const server = await startOpsServer({
    port: 0,
    redis,
    metrics: new Metrics({ processMetrics: false }),
    console: { sources, control, readTimeoutMs: 2_000 },
    ...access,
  });
  servers.push(server);
  return {
    url: server.url,
    audit,
    state,
    approvals,
    history,
    queuedApprovals,
    workgroup: sim.state.workgroups[0]?.name as string,
  };
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

describe('the console forms behind roles, a session and CSRF', () => {
  it('a viewer sees no action form and a POST of theirs answers 403, not a redirect', async () => {
    const { url, audit, workgroup } = await serve({ principals: principals() });
    const { cookie, csrf } = await signIn(url, VIEWER);
    const page = await (await fetch(`${url}/holds`, { headers: { cookie } })).text();
    expect(page).toContain('vera');
    expect(page).not.toContain('data-action=');
    expect(page).not.toContain('Place a hold');
    const hold = { pattern: `${workgroup}/*`, state: 'active', for: '2h', reason: 'demo' };
    const refused = await postForm(url, '/holds', { ...hold, csrf }, { cookie });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('vera is a viewer: this needs the operator role');
    const bearer = await postForm(url, '/holds', hold, { authorization: `Bearer ${VIEWER}` });
    expect(bearer.status).toBe(403);
    expect(await audit.list()).toEqual([]);
  });

  it('refuses an operator form without its CSRF token, with a wrong one, or from another site (403)', async () => {
    const { url, audit, workgroup } = await serve({ principals: principals() });
    const { cookie, csrf } = await signIn(url, OPERATOR);
    expect(csrf).toBeTruthy();
    const hold = { pattern: `${workgroup}/*`, state: 'active', for: '2h', reason: 'demo' };
    expect((await postForm(url, '/holds', hold, { cookie })).status).toBe(403);
    expect((await postForm(url, '/holds', { ...hold, csrf: `${csrf}x` }, { cookie })).status).toBe(403);
    const crossSite = await postForm(
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
    const placed = await postForm(
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
    const released = await postForm(
      url,
      '/holds/release',
      { pattern: `${workgroup}/*` },
      { authorization: `Bearer ${OPERATOR}` },
    );
    expect(released.status).toBe(200);
    expect(await released.json()).toMatchObject({ ok: true });
    expect((await audit.list())[0]).toMatchObject({ who: 'otto', action: 'release' });
    const suspended = await postForm(
      url,
      '/jobs/nightly-pause/suspend',
      { reason: 'freeze', for: '1d' },
      { authorization: `Bearer ${OPERATOR}` },
    );
    expect(await suspended.json()).toMatchObject({ ok: true });
    const unknown = await postForm(
      url,
      '/jobs/no-such-job/suspend',
      {},
      { authorization: `Bearer ${OPERATOR}` },
    );
    expect(unknown.status).toBe(400);
  });

  it('an approver sees the plan with approve and reject forms and approves it: queued again, recorded as the principal; an operator gets neither form and a 403', async () => {
    const { url, approvals, history, queuedApprovals, audit } = await serve({ principals: principals() });
    const runId = 'nightly-pause@manual-approval';
    await waitingRun(approvals, history, runId);
    const operator = await signIn(url, OPERATOR);
    const seen = await (
      await fetch(`${url}/runs/${encodeURIComponent(runId)}`, { headers: { cookie: operator.cookie } })
    ).text();
    expect(seen).toContain('Awaiting approval');
    expect(seen).not.toContain('data-action="approve"');
    const refused = await postForm(
      url,
      `/runs/${encodeURIComponent(runId)}/approve`,
      { csrf: operator.csrf },
      { cookie: operator.cookie },
    );
    expect(refused.status).toBe(403);

    const approver = await signIn(url, APPROVER);
    const page = await (
      await fetch(`${url}/runs/${encodeURIComponent(runId)}`, { headers: { cookie: approver.cookie } })
    ).text();
    expect(page).toContain('data-action="approve"');
    expect(page).toContain('data-action="reject"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] as string;
    const approved = await postForm(
      url,
      `/runs/${encodeURIComponent(runId)}/approve`,
      { csrf, note: 'plan checked' },
      { cookie: approver.cookie },
    );
    expect(approved.status).toBe(303);
    expect(queuedApprovals).toEqual([runId]);
    expect(await approvals.get(runId)).toMatchObject({
      state: 'approved',
      decision: { by: 'ada', note: 'plan checked' },
    });
    expect((await audit.list()).map((entry) => [entry.action, entry.who, entry.where])).toEqual([
      ['approve', 'ada', 'console 127.0.0.1'],
    ]);
  });

  it('signs in only with a known token, sends a page request without one to /login, and signing out ends the session', async () => {
    const { url } = await serve({ principals: principals() });
    expect((await postForm(url, '/login', { token: 'not-a-token' })).status).toBe(401);
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
    expect((await postForm(url, '/logout', { csrf }, { cookie })).status).toBe(303);
    expect((await fetch(`${url}/api/schedules`, { headers: { cookie } })).status).toBe(401);
  });

  it('keeps NIGHTSHIFT_UI_TOKEN a viewer of the console: it reads every page and changes nothing', async () => {
    const { url } = await serve({ principals: principals(), token: UI_TOKEN });
    const auth = { authorization: `Bearer ${UI_TOKEN}` };
    expect((await fetch(`${url}/`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${url}/metrics`, { headers: auth })).status).toBe(200);
    expect((await postForm(url, '/jobs/nightly-pause/suspend', {}, auth)).status).toBe(403);
  });

  it('on loopback without tokens is read-only, unless the local user is let act, who then does with a session of the first page', async () => {
    const readOnly = await serve({});
    expect((await postForm(readOnly.url, '/jobs/nightly-pause/suspend', {})).status).toBe(403);
    expect(await (await fetch(`${readOnly.url}/`)).text()).not.toContain('data-action=');

    const local = await serve({ localUser: 'ana' });
    const first = await fetch(`${local.url}/`);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await first.text())?.[1] as string;
    expect(csrf).toBeTruthy();
    expect((await postForm(local.url, '/jobs/nightly-pause/suspend', {})).status).toBe(403);
    const suspended = await postForm(
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
