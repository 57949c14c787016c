import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics, type OpsServer, startOpsServer } from '../../../src/ops/index.js';
import { eventually, useEngineHarness } from '../../helpers/engine.js';
import { launchChromium, recordedPage } from './browser.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 2 });

const TOKEN = 'ops-browser-token-51ad';

const POLICY = `version: 1
jobs:
  evening-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('the dashboard in a real browser', () => {
  it('asks for the token, then lists the runs queue and shows a finished run among the completed under its Content-Security-Policy, asking no other host for anything', async () => {
    const engine = harness.engine('ops-dashboard');
    engine.worker(harness.sim.url);
    const runId = await engine.enqueue(POLICY, 'evening-pause');
    expect(await engine.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    await eventually(
      'the run completed in BullMQ',
      async () => (await engine.queue.getJobState(runId)) === 'completed',
    );

    let server: OpsServer | undefined;
    try {
      server = await startOpsServer({
        port: 0,
        token: TOKEN,
        redis: engine.redis,
        queue: engine.queue,
        metrics: new Metrics({ queue: engine.queue, processMetrics: false }),
        log: engine.log,
      });
      const url = server.url;

      // without credentials the browser gets a Basic challenge (a person would see a prompt), and no page
      const anonymous = await browser.newContext();
      try {
        const response = await anonymous.request.get(`${url}/ui`);
        expect(response.status()).toBe(401);
        expect(response.headers()['www-authenticate']).toMatch(/^Basic /);
        expect(await response.text()).not.toContain('<html');
      } finally {
        await anonymous.close();
      }

      const { context, page, outside, scriptErrors, failures } = await recordedPage(browser, url, {
        httpCredentials: { username: 'ops', password: TOKEN },
      });
      try {
        const entry = await page.goto(`${url}/ui`);
        expect(entry?.status()).toBe(200);
        // the page works under its policy: a blocked script, style or request would be a script error below
        expect(entry?.headers()['content-security-policy']).toMatch(
          /^default-src 'none'; script-src 'self';/,
        );
        expect(entry?.headers()['x-frame-options']).toBe('DENY');
        await expect(page.title()).resolves.toBe('nightshift');

        const queue = page.getByRole('link', { name: 'runs', exact: true });
        await queue.first().waitFor({ timeout: 15_000 });
        await queue.first().click();
        await page.waitForURL(/\/ui\/queue\/runs/);

        await page
          .getByRole('link', { name: /^completed/i })
          .first()
          .click();
        await page.waitForURL(/status=completed/);
        await page.getByText(runId).first().waitFor({ timeout: 15_000 });
        // read-only: nothing on the page offers to retry, clean or remove a run
        await expect(page.getByRole('button', { name: /retry|clean|remove|delete/i }).count()).resolves.toBe(
          0,
        );
        expect(failures).toEqual([]);
        expect(outside).toEqual([]);
        expect(scriptErrors).toEqual([]);
      } finally {
        await context.close();
      }
    } finally {
      await server?.close();
    }
  }, 60_000);
});
