import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import type { Workgroup } from '../../../src/api/index.js';
import { trimListing } from '../../../src/engine/index.js';
import type { Logger } from '../../../src/log/index.js';
import {
  type ConsoleSources,
  type FindingsView,
  type FleetView,
  Metrics,
  type OpsServer,
  type RunsView,
  type SchedulesView,
  startOpsServer,
  type WorkspaceTimelineView,
} from '../../../src/ops/index.js';
import { checkPolicy } from '../../../src/policy/index.js';
import {
  AuditTrail,
  createRedis,
  FindingsLedger,
  fleetStateStores,
  PolicyStore,
  RedisFleetListings,
  RunHistory,
  Suspensions,
  WorkspaceHistory,
} from '../../../src/store/index.js';
import { captureLog, harnessKeyring } from '../../helpers/engine.js';
import { expectSecurityHeaders } from '../../helpers/ops-headers.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';
import { finding, runSummary } from '../../helpers/summaries.js';

/** A run that finished now: the history keeps 30 days, and the shared builder's runs are from March. */
function recentRun(options: Parameters<typeof runSummary>[0]) {
  const now = Date.now();
  return {
    ...runSummary(options),
    startedAt: new Date(now - 2_000).toISOString(),
    finishedAt: new Date(now).toISOString(),
  };
}

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

const TOKEN = 'console-token-2b7e';
const POLICY = `version: 1
jobs:
  audit:
    schedule: "0 6 * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
    with: { forbid: ["0.0.0.0/0"] }
`;

const servers: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function stores(prefix: string, connection: Redis = redis) {
  const redis = connection;
  return {
    history: new RunHistory(redis, { prefix }),
    policies: new PolicyStore(redis, { prefix, keyring: harnessKeyring() }),
    suspensions: new Suspensions(redis, { prefix }),
    state: fleetStateStores(redis, prefix),
    listings: new RedisFleetListings(redis, { prefix }),
    findings: new FindingsLedger(redis, { prefix }),
    timeline: new WorkspaceHistory(redis, { prefix }),
    audit: new AuditTrail(redis, { prefix }),
    inProgress: async () => undefined,
    underWay: async () => [],
  };
}

async function serve(
  prefix: string,
  token?: string,
  options: { connection?: Redis; log?: Logger; underWay?: ConsoleSources['underWay'] } = {},
) {
  const all = stores(prefix, options.connection);
  const sources: ConsoleSources = {
    ...all,
    ...(options.underWay ? { underWay: options.underWay } : {}),
    readPolicy: (text, sha) =>
      checkPolicy(text, sha, { registry: actionRegistry, env: {}, unsetVariables: 'warning' }).policy ??
      'unreadable',
  };
  const server = await startOpsServer({
    port: 0,
    redis: options.connection ?? redis,
    metrics: new Metrics({ processMetrics: false }),
    console: { sources, readTimeoutMs: 500 },
    ...(token ? { token } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  servers.push(server);
  return { url: server.url, ...all };
}

describe('the console behind the ops server', () => {
  it('answers its pages, assets and JSON only with the token, like /metrics, and sends every page with a self-only content policy, never framed or sniffed', async () => {
    const { url } = await serve(uniquePrefix('console'), TOKEN);
    for (const path of [
      '/',
      '/fleet',
      '/api/schedules',
      '/api/fleet',
      '/console/console.js',
      '/console/console.css',
    ]) {
      const anonymous = await fetch(`${url}${path}`);
      expect(anonymous.status, path).toBe(401);
      const allowed = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(allowed.status, path).toBe(200);
      for (const answer of [anonymous, allowed]) {
        expectSecurityHeaders((name) => answer.headers.get(name), path);
      }
    }
    const page = await fetch(`${url}/`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(page.headers.get('content-security-policy')).toMatch(
      /default-src 'none'; script-src 'self'; style-src 'self'/,
    );
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).not.toMatch(/<script>|<style>|\son\w+=/);
  });

  it('shows the policy in force, the edit a scheduler refused, and clears it when a good one is loaded', async () => {
    const { url, policies } = await serve(uniquePrefix('console'));
    const sha = await policies.put(POLICY);
    await policies.setCurrent(sha, { host: 'sched-1' });
    await policies.setRejected({
      sha: 'b'.repeat(64),
      at: new Date().toISOString(),
      host: 'sched-1',
      problems: ['policy.yaml:3:15: jobs.audit.schedule: expected 5 or 6 fields'],
    });
    const rejected = (await (await fetch(`${url}/api/schedules`)).json()) as SchedulesView;
    expect(rejected.policy).toMatchObject({ sha, host: 'sched-1' });
    expect(rejected.policy?.rejected?.problems).toEqual([
      'policy.yaml:3:15: jobs.audit.schedule: expected 5 or 6 fields',
    ]);
    expect(rejected.entries.map((entry) => entry.name)).toEqual(['audit']);
    await policies.setCurrent(sha, { host: 'sched-1' });
    const cleared = (await (await fetch(`${url}/api/schedules`)).json()) as SchedulesView;
    expect(cleared.policy?.rejected).toBeNull();
  });

  it('answers a run by id with its summary, and 404 naming it when the run is not kept', async () => {
    const { url, history } = await serve(uniquePrefix('console'));
    const run = recentRun({ job: 'audit', failed: 1 });
    await history.record(run);
    const found = await fetch(`${url}/api/runs/${encodeURIComponent(run.runId)}`);
    expect(await found.json()).toEqual(run);
    const page = await (await fetch(`${url}/runs/${encodeURIComponent(run.runId)}`)).text();
    for (const target of run.targets) for (const id of target.requestIds) expect(page).toContain(id);
    const missing = await fetch(`${url}/api/runs/no-such-run`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { message: string }).message).toContain('no-such-run');
    expect((await fetch(`${url}/runs/no-such-run`)).status).toBe(404);
  });

  it('serves the last listing a run stored, and its findings with when they first appeared', async () => {
    const { url, listings, findings } = await serve(uniquePrefix('console'));
    const empty = (await (await fetch(`${url}/api/fleet`)).json()) as FleetView;
    expect(empty.listing).toBeNull();
    const workgroups = [
      {
        workgroup_id: 'wg-1',
        name: 'dev',
        workspaces: [
          { workspace_id: 'ws-1', name: '<b>one</b>', workgroup_id: 'wg-1', status: 'Stopped' },
          { workspace_id: 'ws-2', name: 'two', workgroup_id: 'wg-1', status: 'Active' },
        ],
      },
    ] as unknown as Workgroup[];
    const at = new Date(Date.now() - 60_000).toISOString();
    await listings.save({ at, runId: 'run-9', job: 'audit', workgroups: trimListing(workgroups) });
    const fleet = (await (await fetch(`${url}/api/fleet?workgroup=&state=Stopped`)).json()) as FleetView;
    expect(fleet.listing).toMatchObject({ at, runId: 'run-9', job: 'audit' });
    expect(fleet.listing?.ageMs).toBeGreaterThanOrEqual(60_000);
    expect(fleet.counts.byState).toEqual({ Stopped: 1, Active: 1 });
    expect(fleet.workgroups[0]?.workspaces.map((ws) => ws.name)).toEqual(['<b>one</b>']);
    // a name from the API is text on the page, never markup
    const page = await (await fetch(`${url}/fleet`)).text();
    expect(page).not.toContain('<b>one</b>');
    expect(page).toContain('&lt;b&gt;one&lt;/b&gt;');

    const first = runSummary({ job: 'audit', findings: [finding('open-cidr', 'dev')] });
    await findings.record(first);
    await findings.record(runSummary({ job: 'audit', findings: [finding('open-cidr', 'dev')] }));
    const open = (await (await fetch(`${url}/api/findings`)).json()) as FindingsView;
    expect(open.findings).toMatchObject([
      { job: 'audit', rule: 'open-cidr', subject: 'dev', firstSeen: first.finishedAt },
    ]);
  });

  it('serves each job’s runs as a page at /runs?job=, rendered from /api/runs?job= with the same runs', async () => {
    const { url, history } = await serve(uniquePrefix('console'));
    const audits = [recentRun({ job: 'audit' }), recentRun({ job: 'audit', failed: 1 })];
    for (const run of audits) await history.record(run);
    await history.record(recentRun({ job: 'drill' }));
    const page = await fetch(`${url}/runs?job=audit`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<h1>Runs of audit</h1>');
    for (const run of audits) expect(html).toContain(`href="/runs/${encodeURIComponent(run.runId)}"`);
    expect(html).not.toContain('>drill</a>');
    expect(html).toContain('href="/api/runs?job=audit&amp;limit=50"');
    const json = (await (await fetch(`${url}/api/runs?job=audit&limit=50`)).json()) as RunsView;
    expect(json).toMatchObject({ job: 'audit', limit: 50 });
    expect(json.runs.map((run) => run.runId).sort()).toEqual(audits.map((run) => run.runId).sort());
    expect((await fetch(`${url}/runs`)).status).toBe(200);
  });

  it('lists the runs the queue holds above the finished ones, each linked to its page (where it can be cancelled), with a cancel already asked for', async () => {
    const cancellation = { by: 'otto', at: new Date().toISOString(), reason: 'wrong fleet' };
    const underWay = async () => [
      { runId: 'audit@manual-1', job: 'audit', state: 'running' as const, cancellation },
      { runId: 'drill@manual-2', job: 'drill', state: 'queued' as const, cancellation: null },
    ];
    const { url } = await serve(uniquePrefix('console'), undefined, { underWay });
    const html = await (await fetch(`${url}/runs`)).text();
    const table = html.slice(
      html.indexOf('id="under-way"'),
      html.indexOf('</table>', html.indexOf('id="under-way"')),
    );
    expect(table).toContain('href="/runs/audit%40manual-1"');
    expect(table).toContain('asked by otto: wrong fleet');
    expect(table).toContain('href="/runs/drill%40manual-2"');
    expect(table).toContain('>queued<');
    const oneJob = (await (await fetch(`${url}/api/runs?job=audit`)).json()) as RunsView;
    expect(oneJob.underWay.map((run) => run.runId)).toEqual(['audit@manual-1']);

    const { url: quiet } = await serve(uniquePrefix('console'));
    expect(await (await fetch(`${quiet}/runs`)).text()).toContain('No run is running or queued.');
  });

  it('answers each workspace’s timeline at /fleet/<workgroupId>/<workspaceId>, linked from its cell: the runs that acted on it and the holds that covered it', async () => {
    const { url, listings, history, state } = await serve(uniquePrefix('console'));
    const workgroups = [
      {
        workgroup_id: 'wg-1',
        name: 'dev',
        workspaces: [{ workspace_id: 'ws-1', name: 'kg', workgroup_id: 'wg-1', status: 'Stopping' }],
      },
    ] as unknown as Workgroup[];
    await listings.save({
      at: new Date().toISOString(),
      runId: 'run-1',
      job: 'dev-pause',
      workgroups: trimListing(workgroups),
    });
    const paused = recentRun({ job: 'dev-pause' });
    paused.targets = [
      {
        key: 'wg-1/ws-1',
        workgroupId: 'wg-1',
        workspaceId: 'ws-1',
        outcome: 'succeeded',
        attempts: 1,
        requestIds: ['req-p1'],
      },
    ];
    await history.record(paused);
    await state.holds.place({
      pattern: 'dev/kg',
      state: 'stopped',
      until: new Date(Date.now() + 3_600_000).toISOString(),
      reason: 'budget freeze',
      by: 'ana',
      createdAt: new Date().toISOString(),
    });
    expect(await (await fetch(`${url}/fleet`)).text()).toContain('href="/fleet/wg-1/ws-1"');
    const view = (await (await fetch(`${url}/api/fleet/wg-1/ws-1`)).json()) as WorkspaceTimelineView;
    expect(view.now).toMatchObject({ name: 'kg', state: 'Stopping', hold: { reason: 'budget freeze' } });
    expect(view.events.map((event) => event.kind).sort()).toEqual(['hold', 'run']);
    expect(view.events.find((event) => event.kind === 'run')).toMatchObject({
      runId: paused.runId,
      job: 'dev-pause',
      requestIds: ['req-p1'],
    });
    const page = await fetch(`${url}/fleet/wg-1/ws-1`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`href="/runs/${encodeURIComponent(paused.runId)}"`);
    expect(html).toContain('budget freeze');
    const unknown = await fetch(`${url}/api/fleet/wg-1/nothing`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { message: string }).message).toContain('wg-1/nothing');
    expect((await fetch(`${url}/fleet/wg-1/nothing`)).status).toBe(404);
  });

  it('answers an unchanged page with 304 to the ETag it sent, and a changed one in full', async () => {
    const { url, history } = await serve(uniquePrefix('console'));
    const first = await fetch(`${url}/`);
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^"/);
    expect((await fetch(`${url}/`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    await history.record(recentRun({ job: 'audit' }));
    const changed = await fetch(`${url}/`, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('answers 503 when Redis does not answer within its time, instead of hanging with the outage, and logs no error per request', async () => {
    // nothing listens there: the connection queues every command until a Redis that never comes
    const unreachable = createRedis({ url: 'redis://127.0.0.1:1', role: 'test' });
    const { log, lines } = captureLog('debug');
    try {
      const { url } = await serve(uniquePrefix('console'), undefined, { connection: unreachable, log });
      for (const path of ['/api/fleet', '/', '/fleet']) {
        const started = Date.now();
        const response = await fetch(`${url}${path}`);
        expect(response.status, path).toBe(503);
        expect(Date.now() - started, path).toBeLessThan(3_000);
        expect(response.headers.get('retry-after')).toBe('5');
        expect(((await response.json()) as { message: string }).message).toMatch(
          /Redis did not answer within 500 ms/,
        );
      }
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    } finally {
      unreachable.disconnect();
    }
  });

  it('answers /favicon.ico with an icon, which every page links, so no browser logs a 404 for it', async () => {
    const { url } = await serve(uniquePrefix('console'));
    const icon = await fetch(`${url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    const bytes = Buffer.from(await icon.arrayBuffer());
    // an ICO of one 32×32 image, a PNG
    expect([...bytes.subarray(0, 8)]).toEqual([0, 0, 1, 0, 1, 0, 32, 32]);
    expect(bytes.subarray(22, 26).toString('latin1')).toBe('\x89PNG');
    for (const path of ['/', '/fleet', '/savings', '/findings'])
      expect(await (await fetch(`${url}${path}`)).text(), path).toContain(
        '<link rel="icon" href="/favicon.ico">',
      );
  });

  it('refuses a query it cannot read with 400 naming the parameter', async () => {
    const { url } = await serve(uniquePrefix('console'));
    for (const [path, name] of [
      ['/api/savings?days=0', 'days'],
      ['/api/savings?days=many', 'days'],
      ['/api/runs?limit=100000', 'limit'],
    ] as const) {
      const response = await fetch(`${url}${path}`);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { message: string }).message, path).toMatch(new RegExp(`^${name}:`));
    }
  });
});
