import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { queuedRuns } from '../../../src/cli/console-sources.js';
import { trimListing } from '../../../src/engine/index.js';
import {
  type ConsoleSources,
  Metrics,
  type OpsServer,
  PrincipalDirectory,
  startOpsServer,
  tokenHash,
} from '../../../src/ops/index.js';
import { checkPolicy } from '../../../src/policy/index.js';
import { queueApprovedRun } from '../../../src/queue/index.js';
import {
  Approvals,
  AuditTrail,
  FindingsLedger,
  RedisFleetListings,
  RunCancellations,
  WorkspaceHistory,
} from '../../../src/store/index.js';
import { systemClock } from '../../../src/time/index.js';
import { drillAndBackup } from '../../helpers/console-forms.js';
import { type Engine, eventually, pauseRequests, useEngineHarness } from '../../helpers/engine.js';
import { ONE_AT_A_TIME_PAUSE } from '../../helpers/policies.js';
import { launchChromium, recordedPage } from './browser.js';

// 400 workspaces, paused one at a time at 300 ms each: two minutes of pausing, cancelled after a few
const harness = useEngineHarness(
  { workgroups: 20, workspacesPerWorkgroup: 20 },
  { faults: { latencyMs: 300, operations: ['pauseWorkspace'] } },
);

/** The run's lease; the worker renews it (and hears of a cancel) every third of it. */
const LEASE_MS = 3_000;
const VIEWER = 'viewer-token-7c1e';
const OPERATOR = 'operator-token-2a9f';
const SECOND_OPERATOR = 'operator-token-5d3b';
const APPROVER = 'approver-token-8e4a';

/** The slow pause, and a restore drill of ops/drill that waits for an approver. */
function policyWithDrill(backupId: string): string {
  return `${ONE_AT_A_TIME_PAUSE}  weekly-drill:
    schedule: "0 3 * * 0"
    action: restore-drill
    timeout: 5m
    with: { workgroup: ops, workspace: drill, backupId: ${backupId}, waitReady: 1m, afterwards: leave }
    approval: { expires: 1h }
`;
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** The console `nightshift start` serves, on the engine's Redis: its reads, its changes, three principals. */
async function consoleOf(engine: Engine): Promise<OpsServer> {
  const { prefix, redis } = engine;
  const audit = new AuditTrail(redis, { prefix });
  const cancellations = new RunCancellations(redis, { prefix });
  const sources: ConsoleSources = {
    history: engine.history,
    policies: engine.policies,
    suspensions: engine.suspensions,
    state: engine.state,
    listings: new RedisFleetListings(redis, { prefix }),
    findings: new FindingsLedger(redis, { prefix }),
    timeline: new WorkspaceHistory(redis, { prefix }),
    audit,
    ...queuedRuns(engine.queue, cancellations),
    readPolicy: (text, sha) =>
      checkPolicy(text, sha, { registry: actionRegistry, env: {} }).policy ?? 'unreadable',
  };
  const server = await startOpsServer({
    port: 0,
    redis,
    metrics: new Metrics({ processMetrics: false }),
    principals: new PrincipalDirectory([
      { name: 'vera', role: 'viewer', token: tokenHash(VIEWER) },
      { name: 'otto', role: 'operator', token: tokenHash(OPERATOR) },
      { name: 'pia', role: 'operator', token: tokenHash(SECOND_OPERATOR) },
      { name: 'ada', role: 'approver', token: tokenHash(APPROVER) },
    ]),
    console: {
      sources,
      control: {
        holds: engine.state.holds,
        suspensions: engine.suspensions,
        cancellations,
        queued: async (runId) => (await engine.queue.getJob(runId))?.data,
        audit,
        approvals: new Approvals(redis, { prefix }),
        queueApproved: (record) => queueApprovedRun(engine.queue, record),
        recordEnded: (summary) => engine.history.record(summary),
        clock: systemClock,
      },
      refreshMs: 0,
    },
  });
  onTestFinished(() => server.close());
  return server;
}

async function signIn(context: BrowserContext, page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.waitForURL(/\/login$/);
  await page.getByLabel('Console token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${url}/`);
  const [cookie] = await context.cookies();
  expect(cookie).toMatchObject({ name: 'nightshift_session', httpOnly: true, sameSite: 'Strict' });
}

describe('console actions in a real browser, by role', () => {
  it('a viewer gets no button and a 403; an operator places a previewed hold, finds a running 400-workspace pause among the runs under way and cancels it, and it stops within its lease; an approver approves a waiting restore drill with its plan on the page and it runs; the audit page lists what each person did', async () => {
    harness.sim.reset();
    const engine = harness.engine('console-actions');
    await engine.policies.setCurrent(await engine.policies.put(ONE_AT_A_TIME_PAUSE), { host: 'test' });
    const { state } = harness.sim;
    await new RedisFleetListings(engine.redis, { prefix: engine.prefix }).save({
      at: new Date().toISOString(),
      runId: 'listing@1',
      job: 'slow-pause',
      workgroups: trimListing(
        state.workgroups.map((wg) => ({
          ...wg,
          workspaces: state.workspaces.filter((ws) => ws.workgroup_id === wg.workgroup_id),
        })),
      ),
    });
    const group = state.workgroups[19]?.name as string;
    const { url } = await consoleOf(engine);

    // the viewer: every page, no form that changes anything, and a POST refused outright
    const viewer = await recordedPage(browser, url);
    await signIn(viewer.context, viewer.page, url, VIEWER);
    for (const path of ['/', '/holds'])
      await expect(
        viewer.page.goto(`${url}${path}`).then(() => viewer.page.locator('form[data-action]').count()),
      ).resolves.toBe(0);
    await expect(viewer.page.getByText('Place a hold').count()).resolves.toBe(0);
    const refused = await viewer.page.request.post(`${url}/holds`, {
      form: { pattern: `${group}/*`, state: 'active', for: '2h', reason: 'demo' },
      maxRedirects: 0,
    });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain('vera is a viewer');

    // the operator: the hold's preview says what it matches before anything is placed
    const operator = await recordedPage(browser, url);
    const { page } = operator;
    await signIn(operator.context, page, url, OPERATOR);
    await page.goto(`${url}/holds`);
    await page.getByLabel('Workspaces').fill(`${group}/*`);
    await page.getByLabel('State').selectOption('active');
    await page.getByLabel('For').fill('2h');
    await page.getByLabel('Reason').fill('customer demo');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.waitForURL(/\/holds\/preview\?/);
    await expect(page.locator('#matches').textContent()).resolves.toContain('matches 20 workspaces');
    await expect(engine.state.holds.active(new Date())).resolves.toEqual([]);
    await page.getByRole('button', { name: 'Place hold' }).click();
    await page.waitForURL(`${url}/holds`);
    await expect(page.locator('#flash').textContent()).resolves.toContain(`Held ${group}/* active until`);
    await expect(page.locator('#holds').textContent()).resolves.toContain('customer demo');

    // a pause over the fleet, running; the operator finds it among the runs under way and cancels it from its page
    const lease = { lockDurationMs: LEASE_MS };
    engine.worker(harness.sim.url, lease);
    const runId = await engine.enqueue(ONE_AT_A_TIME_PAUSE, 'slow-pause');
    await eventually('the pause under way', () => pauseRequests(harness.sim).size >= 2, 15_000);
    await page.goto(`${url}/runs`);
    await expect(page.locator('#under-way tbody').textContent()).resolves.toContain(
      `${runId}slow-pauserunning`,
    );
    await page.locator('#under-way').getByRole('link', { name: runId }).click();
    await page.waitForURL(`${url}/runs/${encodeURIComponent(runId)}`);
    await expect(page.locator('#run-state').textContent()).resolves.toBe('running');
    await page.getByLabel('Reason').fill('wrong fleet');
    const cancelledAt = Date.now();
    await page.getByRole('button', { name: 'Cancel this run' }).click();
    await expect(page.locator('#flash').textContent()).resolves.toContain(`Cancelling ${runId}`);
    const run = await engine.waitForRun(runId, 2 * LEASE_MS);
    expect(run).toMatchObject({ outcome: 'cancelled', cancellation: { by: 'otto', reason: 'wrong fleet' } });
    expect(Date.parse(run.finishedAt as string) - cancelledAt).toBeLessThan(LEASE_MS);
    expect(run.counts.total).toBeLessThan(400);
    // what it paused stays nightshift's, to be handed back by a resume
    const paused = run.targets.filter((target) => target.outcome === 'succeeded').map((target) => target.key);
    expect(paused.length).toBeGreaterThan(0);
    const ledger = await engine.state.ledger.all();
    for (const key of paused) expect(ledger.get(key), key).toMatchObject({ owner: 'slow-pause', runId });
    await page.reload();
    await expect(page.locator('main').textContent()).resolves.toContain('cancelled by otto: wrong fleet');

    // a second operator, from a script with a bearer token
    const suspended = await fetch(`${url}/jobs/slow-pause/suspend`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${SECOND_OPERATOR}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ reason: 'until the fleet is checked' }),
    });
    expect(suspended.status).toBe(200);

    // the approver: a drill waiting with its plan on its page, approved there, then run
    const policy = policyWithDrill(drillAndBackup(harness.sim).backup.backup_id);
    const drillId = await engine.enqueue(policy, 'weekly-drill');
    await eventually(
      'the drill waiting',
      async () => (await engine.history.get(drillId))?.outcome === 'awaiting-approval',
      15_000,
    );
    const approver = await recordedPage(browser, url);
    await signIn(approver.context, approver.page, url, APPROVER);
    await approver.page.goto(`${url}/runs/${encodeURIComponent(drillId)}`);
    await expect(approver.page.locator('#approval').textContent()).resolves.toContain('Awaiting approval');
    await expect(approver.page.locator('#targets + *').textContent()).resolves.toMatch(/planned/);
    await approver.page.getByLabel('Approval note').fill('backup checked');
    await approver.page.getByRole('button', { name: 'Approve this plan' }).click();
    await expect(approver.page.locator('#flash').textContent()).resolves.toContain(`Approved ${drillId}`);
    const drilled = await eventually(
      'the drill run',
      async () => {
        const summary = await engine.history.get(drillId);
        return summary?.outcome !== 'awaiting-approval' ? summary : undefined;
      },
      20_000,
    );
    expect(drilled).toMatchObject({
      outcome: 'succeeded',
      approval: { decision: { by: 'ada', note: 'backup checked' } },
    });

    // the audit page, as the viewer sees it: every change, newest first, who and from where
    await viewer.page.goto(`${url}/audit`);
    const rows = await viewer.page.locator('#audit tbody tr').allTextContents();
    expect(rows.map((row) => row.replace(/\s+/g, ' '))).toEqual([
      expect.stringMatching(/ada approve .*backup checked console 127\.0\.0\.1/),
      expect.stringMatching(/pia suspend slow-pause .*until the fleet is checked console 127\.0\.0\.1/),
      expect.stringMatching(
        new RegExp(
          `otto cancel ${runId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*wrong fleet console 127\\.0\\.0\\.1`,
        ),
      ),
      expect.stringMatching(/otto hold .*customer demo console 127\.0\.0\.1/),
    ]);

    for (const recorded of [viewer, operator, approver]) {
      expect(recorded.outside).toEqual([]);
      expect(recorded.scriptErrors).toEqual([]);
      await recorded.context.close();
    }
  }, 60_000);
});
