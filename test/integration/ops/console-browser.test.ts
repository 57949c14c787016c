import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetView, SavingsView, SchedulesView, WorkspaceTimelineView } from '../../../src/ops/index.js';
import { DEFAULT_API_KEY, type SimulatorHandle, startSimulator } from '../../../src/sim/index.js';
import { createRedis, fleetStateStores } from '../../../src/store/index.js';
import { assertBuilt, type CliProcess, eventually } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis, uniquePrefix } from '../../helpers/redis.js';
import { launchChromium, recordedPage } from './browser.js';
import { killGroup, logLines, signalGroup, startService } from './service-group.js';

/** Where the screenshots go: docs/images to refresh the ones docs/operations.md shows, else a temporary folder. */
const SCREENSHOTS = process.env.NIGHTSHIFT_SCREENSHOTS_DIR;

/** An hour of uptime three hours from now (UTC): the window is in its off hours while the test runs. */
function offHoursUptime(): string {
  const hour = (new Date().getUTCHours() + 3) % 24;
  const end = hour === 23 ? '24:00' : `${String(hour + 1).padStart(2, '0')}:00`;
  return `Mon-Sun ${String(hour).padStart(2, '0')}:00-${end}`;
}

/** Today and a day next month in Berlin: the window's holidays, so the page shows a day skipped. */
function holidays(): string {
  const berlin = (at: number) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(at);
  return `["${berlin(Date.now())}", "${berlin(Date.now() + 30 * 86_400_000)}"]`;
}

const POLICY = `version: 1
calendars:
  holidays: ${holidays()}
pricing:
  currency: EUR
  perHour: { TG-4: 0.45, TG-8: 0.90, TG-16: 1.80, TG-32: 3.60 }
windows:
  office-hours:
    target: { workgroups: ["staging-*"] }
    uptime: "${offHoursUptime()}"
    timezone: Europe/Berlin
    every: 5s
    skip: [holidays]
jobs:
  dev-pause:
    description: Pause the dev workgroups
    schedule: "*/5 * * * * *"
    action: pause
    target: { workgroups: ["dev-*"] }
  allow-list-audit:
    schedule: "*/5 * * * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
    with:
      forbid: ["0.0.0.0/0", "::/0"]
      forbidOverlap: ["10.0.0.0/8"]
  weekly-resume:
    schedule: "0 7 * * 1"
    timezone: America/New_York
    action: resume
    target: { workgroups: ["qa-*"] }
    suspend: true
`;

let browser: Browser;
let redis: TestRedis;
let sim: SimulatorHandle;
let dir: string;
let shots: string;
let service: CliProcess | undefined;
let url: string;
const prefix = uniquePrefix('console');

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`${url}${path}`);
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

beforeAll(async () => {
  assertBuilt();
  [browser, redis, sim] = await Promise.all([
    launchChromium(),
    startTestRedis(),
    startSimulator({
      port: 0,
      seed: 1,
      fleet: { workgroups: 20, workspacesPerWorkgroup: 5 },
      transitionMs: 200,
    }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'nightshift-console-'));
  shots = SCREENSHOTS ?? join(dir, 'shots');
  mkdirSync(shots, { recursive: true });
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  // a hold the fleet view must show, placed as `nightshift hold` places one
  const connection = createRedis({ url: redis.url, role: 'test' });
  const qaGroup = sim.state.workgroups.find((wg) => wg.name.startsWith('qa'));
  // an Active one: a hold on a workspace no window covers acts only if it is in the held state
  const qa = sim.state.workspaces.find(
    (ws) => ws.workgroup_id === qaGroup?.workgroup_id && ws.status === 'Active',
  );
  await fleetStateStores(connection, prefix).holds.place({
    pattern: `${qaGroup?.name}/${qa?.name}`,
    state: 'active',
    until: new Date(Date.now() + 86_400_000).toISOString(),
    reason: 'customer demo',
    by: 'ana',
    createdAt: new Date().toISOString(),
  });
  // two weeks of nights paused by the window before today, closed as a morning resume closes them
  const { ledger } = fleetStateStores(connection, prefix);
  const day = 86_400_000;
  const midnight = Math.floor(Date.now() / day) * day;
  for (let d = 14; d >= 1; d--)
    for (const [i, workgroupName] of ['staging-eu', 'staging-us', 'dev-alpha'].entries()) {
      const key = `wg-history-${i}/ws-${d}`;
      const pausedAt = new Date(midnight - d * day - 5 * 3_600_000 + i * 1_800_000).toISOString();
      await ledger.put({
        key,
        workgroupId: `wg-history-${i}`,
        workspaceId: `ws-${d}`,
        workgroupName,
        workspaceName: 'main',
        owner: 'office-hours',
        ownerKind: 'window',
        runId: `history-${d}`,
        state: 'confirmed',
        intendedAt: pausedAt,
        pausedAt,
        pricePerHour: 0.9,
        currency: 'EUR',
      });
      await ledger.end(key, 'resumed', new Date(midnight - d * day + 7 * 3_600_000));
    }
  connection.disconnect();

  service = startService(['start', join(dir, 'policy.yaml')], {
    REDIS_URL: redis.url,
    NIGHTSHIFT_REDIS_PREFIX: prefix,
    NIGHTSHIFT_API_URL: sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_POLL_INTERVAL_MS: '200',
    NIGHTSHIFT_LOG_LEVEL: 'info',
    NIGHTSHIFT_LOG_FORMAT: 'json',
  });
  const listening = await eventually(
    'the ops server listening',
    () => logLines(service as CliProcess).find((line) => line.msg === 'ops server listening'),
    20_000,
  );
  url = String(listening.address);
  // a run of each cron job and the window, and a listing of the fleet
  await eventually(
    'every job and the window ran once',
    async () => {
      const view = await getJson<SchedulesView>('/api/schedules');
      const ran = view.entries.filter((entry) => entry.lastRun?.outcome === 'succeeded');
      return ran.length >= 3 && (await getJson<FleetView>('/api/fleet')).listing !== null;
    },
    45_000,
    250,
  );
}, 90_000);

afterAll(async () => {
  if (service) {
    const stopped = await signalGroup(service, 'SIGTERM', 15_000);
    if (stopped.exit === 'still running') killGroup(service);
  }
  await browser?.close();
  await sim?.close();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function openConsole(options: { colorScheme?: 'light' | 'dark' } = {}) {
  return recordedPage(browser, url, { viewport: { width: 1280, height: 900 }, ...options });
}

/** The runs the schedules page names: each run's, and the latest of each folded stretch. */
function recentRunIds(view: SchedulesView): string[] {
  return view.recent.map((entry) => (entry.kind === 'run' ? entry.run.runId : entry.latest.runId));
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
}

describe('the operator console in a real browser, against `nightshift start`, the simulator and Redis', () => {
  it('shows every job and window of the policy, a run with its request IDs, the fleet by state, savings and findings, with nothing leaving the server', async () => {
    const { context, page, outside, scriptErrors, failures } = await openConsole();
    try {
      const schedules = await getJson<SchedulesView>('/api/schedules');
      expect((await page.goto(`${url}/`))?.status()).toBe(200);
      for (const name of ['office-hours', 'dev-pause', 'allow-list-audit', 'weekly-resume'])
        await expect(
          page.getByRole('row', { name: new RegExp(`\\b${name}\\b`) }).count(),
          name,
        ).resolves.toBeGreaterThan(0);
      await expect(
        page.getByText(schedules.policy?.sha.slice(0, 12) ?? 'no policy').count(),
      ).resolves.toBeGreaterThan(0);
      await expect(page.getByText(/suspend/i).count()).resolves.toBeGreaterThan(0);
      await shoot(page, 'console-schedules');

      // a run's detail, reached from its job's row, shows every request ID the run recorded
      const pause = schedules.entries.find((entry) => entry.name === 'dev-pause');
      const runId = pause?.lastRun?.runId as string;
      await page
        .locator(`a[href$="/runs/${encodeURIComponent(runId)}"]`)
        .first()
        .click();
      await page.waitForURL(/\/runs\//);
      const run = await getJson<{ targets: { requestIds: string[] }[]; requestIds: string[] }>(
        `/api/runs/${encodeURIComponent(runId)}`,
      );
      const requestIds = [...run.requestIds, ...run.targets.flatMap((target) => target.requestIds)];
      expect(requestIds.length).toBeGreaterThan(0);
      const text = await page.locator('main').textContent();
      for (const id of requestIds) expect(text, id).toContain(id);
      await shoot(page, 'console-run');

      // the fleet: the grid by state, Stopped where the pause and the window acted, the hold shown
      const fleet = await getJson<FleetView>('/api/fleet');
      expect(fleet.counts.byState.Stopped ?? 0).toBeGreaterThan(0);
      expect(fleet.counts.byState.Active ?? 0).toBeGreaterThan(0);
      expect(fleet.counts.held).toBe(1);
      await page.goto(`${url}/fleet`);
      const fleetText = await page.locator('main').textContent();
      expect(fleetText).toMatch(/Stopped/);
      expect(fleetText).toMatch(/Active/);
      expect(fleetText).toMatch(/customer demo/);
      await shoot(page, 'console-fleet');

      // the state filter, by keyboard only: choose in the select, Tab to the button, Enter
      const stateFilter = page.locator('#filter-state');
      await stateFilter.focus();
      await stateFilter.selectOption('Stopped');
      await page.keyboard.press('Tab');
      await expect(page.locator(':focus').textContent()).resolves.toMatch(/apply/i);
      await page.keyboard.press('Enter');
      await page.waitForURL(/state=Stopped/);
      const filtered = await page.locator('main').textContent();
      expect(filtered).toMatch(/Stopped/);

      // a cell leads to its workspace's timeline: who paused it, in which run, with its request ID
      await page.locator('a.cell[title*="paused by job dev-pause"]').first().click();
      await page.waitForURL(/\/fleet\/[^/]+\/[^/?]+$/);
      const timeline = await getJson<WorkspaceTimelineView>(
        new URL(page.url()).pathname.replace('/fleet/', '/api/fleet/'),
      );
      const pausedBy = timeline.events.find((event) => event.kind === 'run' && event.job === 'dev-pause');
      expect(pausedBy).toBeDefined();
      const timelineText = await page.locator('main').textContent();
      expect(timelineText).toContain(pausedBy?.kind === 'run' ? pausedBy.runId : 'a run');
      expect(timelineText).toMatch(/paused, owned now/);
      await shoot(page, 'console-timeline');

      // every job has its runs page, linked from its name on the schedules page
      await page.goto(`${url}/`);
      await page.getByRole('link', { name: 'dev-pause', exact: true }).first().click();
      await page.waitForURL(/\/runs\?job=dev-pause/);
      await expect(page.locator('main tbody tr').count()).resolves.toBeGreaterThan(0);
      await expect(page.locator('h1').textContent()).resolves.toBe('Runs of dev-pause');
      await shoot(page, 'console-runs');

      const savings = await getJson<SavingsView>('/api/savings');
      expect(savings.days).toHaveLength(30);
      // 14 nights of 12 h (11.5 h and 11 h) across three workgroups, and the pauses of this run so far
      expect(savings.total.pausedHours).toBeGreaterThanOrEqual(14 * (12 + 11.5 + 11));
      expect(
        savings.workgroups
          .slice(0, 3)
          .map((row) => row.workgroup)
          .sort(),
      ).toEqual(['dev-alpha', 'staging-eu', 'staging-us']);
      await page.goto(`${url}/savings`);
      await expect(page.locator('svg.chart g.bar').count()).resolves.toBe(30);
      await shoot(page, 'console-savings');

      await page.goto(`${url}/findings`);
      await expect(page.getByText('allow-list-audit').count()).resolves.toBeGreaterThan(0);
      await shoot(page, 'console-findings');

      // a JSON document opened in the browser: its icon request is answered too
      expect((await page.goto(`${url}/api/fleet`))?.status()).toBe(200);

      // the queue dashboard beside it asks no other host either
      expect((await page.goto(`${url}/ui`))?.status()).toBe(200);

      expect(outside).toEqual([]);
      expect(scriptErrors).toEqual([]);
      expect(failures).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('refreshes itself without a reload: a run that finishes while the page is open appears in it', async () => {
    const { context, page, outside, scriptErrors } = await openConsole({ colorScheme: 'dark' });
    try {
      await page.goto(`${url}/`);
      const before = await getJson<SchedulesView>('/api/schedules');
      const seen = new Set(recentRunIds(before));
      // marks the document: a reload would lose the mark, a refresh in place keeps it
      await page.evaluate(() => {
        (globalThis as unknown as { marked: boolean }).marked = true;
      });
      const fresh = await eventually(
        'a run newer than the page',
        async () =>
          recentRunIds(await getJson<SchedulesView>('/api/schedules')).find((runId) => !seen.has(runId)),
        20_000,
        250,
      );
      await page
        .locator(`a[href$="/runs/${encodeURIComponent(fresh)}"]`)
        .first()
        .waitFor({ timeout: 15_000 });
      await expect(page.evaluate(() => (globalThis as unknown as { marked?: boolean }).marked)).resolves.toBe(
        true,
      );
      await page.goto(`${url}/fleet`);
      await shoot(page, 'console-fleet-dark');
      expect(outside).toEqual([]);
      expect(scriptErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
