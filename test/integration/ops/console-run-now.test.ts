// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the policy here writes its own ${VAR} syntax
import { afterEach, describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { runNowCheck } from '../../../src/cli/console-sources.js';
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
import { enqueueRuns, manualRunId } from '../../../src/queue/index.js';
import {
  Approvals,
  AuditTrail,
  FindingsLedger,
  RedisFleetListings,
  RunCancellations,
  WorkspaceHistory,
} from '../../../src/store/index.js';
import { systemClock } from '../../../src/time/index.js';
import { drillAndBackup, postForm } from '../../helpers/console-forms.js';
import { type Engine, useEngineHarness } from '../../helpers/engine.js';
import { DRILL_BY_PARAMETER } from '../../helpers/policies.js';

const VIEWER = 'viewer-token-0b3e57';
const OPERATOR = 'operator-token-6d21fa';

/** The drill, and a window (which reconciles: no run now for it). */
const POLICY = `${DRILL_BY_PARAMETER}windows:
  office:
    target: { workgroups: ["dev-*"] }
    uptime: "Mon-Fri 07:30-19:30"
    timezone: UTC
`;

const servers: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/**
 * The console on the engine's Redis and prefix, the policy above in force. Its run-now checks runs
 * as `nightshift start` wires it (runNowCheck, with an environment that sets nothing) and queues
 * them signed with the engine's key; `signs: false` is a process without a policy key.
 */
async function serve(engine: Engine, { signs = true }: { signs?: boolean } = {}) {
  const { redis, prefix } = engine;
  await engine.policies.setCurrent(await engine.policies.put(POLICY), { host: 'test' });
  const audit = new AuditTrail(redis, { prefix });
  const sources: ConsoleSources = {
    history: engine.history,
    policies: engine.policies,
    suspensions: engine.suspensions,
    state: engine.state,
    listings: new RedisFleetListings(redis, { prefix }),
    findings: new FindingsLedger(redis, { prefix }),
    timeline: new WorkspaceHistory(redis, { prefix }),
    audit,
    inProgress: async () => undefined,
    underWay: async () => [],
    readPolicy: (text, sha) =>
      checkPolicy(text, sha, { registry: actionRegistry, env: {}, unsetVariables: 'warning' }).policy ??
      'unreadable',
  };
  const control: ConsoleControl = {
    holds: engine.state.holds,
    suspensions: engine.suspensions,
    cancellations: new RunCancellations(redis, { prefix }),
    queued: async () => undefined,
    audit,
    approvals: new Approvals(redis, { prefix }),
    queueApproved: async () => {},
    recordEnded: (summary) => engine.history.record(summary),
    clock: systemClock,
    runNow: signs
      ? {
          policies: engine.policies,
          runId: manualRunId,
          enqueue: (run) => enqueueRuns(engine.queue, [run]),
          audit,
          check: runNowCheck({ env: {} }, undefined),
        }
      : undefined,
  };
  const server = await startOpsServer({
    port: 0,
    redis,
    metrics: new Metrics({ processMetrics: false }),
    console: { sources, control, readTimeoutMs: 2_000 },
    principals: new PrincipalDirectory([
      { name: 'vera', role: 'viewer', token: tokenHash(VIEWER) },
      { name: 'otto', role: 'operator', token: tokenHash(OPERATOR) },
    ]),
  });
  servers.push(server);
  return { url: server.url, audit };
}

/** Signs in with the form; the session cookie, and the schedules page with the CSRF token its forms carry. */
async function signIn(url: string, token: string) {
  const login = await postForm(url, '/login', { token });
  expect(login.status).toBe(303);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const page = await (await fetch(`${url}/`, { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  return { cookie, csrf, page };
}

describe('run now from the console (Redis, a worker, simulator)', () => {
  const harness = useEngineHarness({ workgroups: 4, workspacesPerWorkgroup: 4 });

  it('an operator runs the drill with a backup: queued with signed parameters, recorded as the principal from `console 127.0.0.1`, and a worker restores that backup', async () => {
    const engine = harness.engine('console-run-now');
    const { url, audit } = await serve(engine);
    const { drill, backup } = drillAndBackup(harness.sim);
    const { cookie, csrf, page } = await signIn(url, OPERATOR);
    expect(page).toContain('id="run-drill"');
    expect(page).toContain('data-action="run"');
    // a window reconciles on its own schedule: nothing to run now
    expect(page).not.toContain('id="run-office"');

    const queued = await postForm(
      url,
      '/jobs/drill/run',
      { csrf, with: `backupId=${backup.backup_id}\n`, reason: 'drill before the upgrade' },
      { cookie },
    );
    expect(queued.status).toBe(303);
    const location = queued.headers.get('location') ?? '';
    expect(location).toMatch(/^\/runs\/drill%40manual-/);
    const runId = decodeURIComponent(location.slice('/runs/'.length));
    const entry = await engine.queue.getJob(runId);
    expect(entry?.data).toMatchObject({
      job: 'drill',
      trigger: 'manual',
      dryRun: false,
      parameters: { backupId: backup.backup_id },
    });
    const data = entry?.data;
    expect(
      data?.parameters &&
        data.parameterSignatures &&
        engine.policies.verifyParameters(
          { runId, job: 'drill', policySha: data.policySha, parameters: data.parameters },
          data.parameterSignatures,
        ),
    ).toBe('signed');
    expect(await audit.list()).toEqual([
      expect.objectContaining({
        who: 'otto',
        where: 'console 127.0.0.1',
        action: 'run',
        subject: runId,
        why: 'drill before the upgrade',
        details: { job: 'drill', 'with.backupId': backup.backup_id },
      }),
    ]);

    const since = harness.sim.requests().at(-1)?.seq ?? 0;
    engine.worker(harness.sim.url);
    const summary = await engine.waitForRun(runId, 60_000);
    expect(summary).toMatchObject({ outcome: 'succeeded', parameters: { backupId: backup.backup_id } });
    const restores = harness.sim
      .requests()
      .filter(
        (request) =>
          request.seq > since &&
          request.operation === 'restoreBackup' &&
          request.path.includes(`/${drill.workspace_id}/`),
      );
    expect(restores.map((request) => request.status)).toEqual([200]);
    const runPage = await (await fetch(`${url}${location}`, { headers: { cookie } })).text();
    expect(runPage).toContain(`Queued ${runId}.`);
  });

  it('answers a key the action does not take with the located problem, and a line that is no key=value with what is wrong, queuing nothing', async () => {
    const engine = harness.engine('console-run-now-bad');
    const { url, audit } = await serve(engine);
    const bearer = { authorization: `Bearer ${OPERATOR}` };
    const misspelt = await postForm(url, '/jobs/drill/run', { with: 'backupid=bk-1' }, bearer);
    expect(misspelt.status).toBe(400);
    const answer = (await misspelt.json()) as { ok: boolean; message: string; location: string };
    expect(answer).toMatchObject({ ok: false, location: '/' });
    expect(answer.message).toMatch(
      /^Not queued: policy@[0-9a-f]{12}:3:3: --with backupid=bk-1: .*did you mean "backupId"\?/,
    );

    const { cookie, csrf } = await signIn(url, OPERATOR);
    const malformed = await postForm(url, '/jobs/drill/run', { csrf, with: 'backupId bk-1' }, { cookie });
    expect(malformed.status).toBe(303);
    expect(malformed.headers.get('location')).toBe('/');
    const flash = await (await fetch(`${url}/`, { headers: { cookie } })).text();
    expect(flash).toContain('Not queued: parameters, line 1 &quot;backupId bk-1&quot;: expected key=value');

    const window = await postForm(url, '/jobs/office/run', {}, bearer);
    expect(await window.json()).toMatchObject({ ok: false, message: expect.stringContaining('is a window') });
    const unknown = await postForm(url, '/jobs/no-such-job/run', {}, bearer);
    expect(await unknown.json()).toMatchObject({
      message: 'Not queued: no job "no-such-job" in the policy in force',
    });
    expect(await engine.queue.count()).toBe(0);
    expect(await audit.list()).toEqual([]);
  });

  it('offers a viewer no run-now form and answers their POST 403', async () => {
    const engine = harness.engine('console-run-now-viewer');
    const { url, audit } = await serve(engine);
    const { cookie, csrf, page } = await signIn(url, VIEWER);
    expect(page).not.toContain('data-action="run"');
    const refused = await postForm(url, '/jobs/drill/run', { csrf, with: 'backupId=bk-1' }, { cookie });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('vera is a viewer: this needs the operator role');
    const bearer = await postForm(url, '/jobs/drill/run', {}, { authorization: `Bearer ${VIEWER}` });
    expect(bearer.status).toBe(403);
    expect(await engine.queue.count()).toBe(0);
    expect(await audit.list()).toEqual([]);
  });

  it('in a process without a policy key offers no run-now form, and a POST answers 503 saying why', async () => {
    const engine = harness.engine('console-run-now-unsigned');
    const { url } = await serve(engine, { signs: false });
    const { cookie, csrf, page } = await signIn(url, OPERATOR);
    expect(page).toContain('data-action="suspend"');
    expect(page).not.toContain('data-action="run"');
    const refused = await postForm(url, '/jobs/drill/run', { csrf, with: 'backupId=bk-1' }, { cookie });
    expect(refused.status).toBe(503);
    expect(await refused.text()).toContain('no policy key (NIGHTSHIFT_POLICY_KEY) to sign them with');
    expect(await engine.queue.count()).toBe(0);
  });
});
