import { beforeEach, describe, expect, it } from 'vitest';
import { eventually, pauseRequests, useEngineHarness, workspacesNot } from '../../helpers/engine.js';
import { startRefusingProxy } from '../../helpers/refusing-proxy.js';

const harness = useEngineHarness({ workgroups: 3, workspacesPerWorkgroup: 4 });

beforeEach(() => harness.sim.reset());

/** A job pausing the whole fleet, with these settings. */
function pausePolicy(...settings: string[]): string {
  return `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
${settings.map((setting) => `    ${setting}\n`).join('')}`;
}

describe('API throttling during a run', () => {
  it('a queued pause of 12 workspaces throttled at 3 requests a second succeeds with 2 attempts: throttled waits are not attempts', async () => {
    const sim = harness.sim;
    sim.setFaults({ throttleRps: 3 });
    const engine = harness.engine('throttled-pause');
    engine.worker(sim.url);
    const policy = pausePolicy('retry: { attempts: 2 }');
    const run = await engine.waitForRun(await engine.enqueue(policy, 'fleet-pause'), 60_000);

    expect(run).toMatchObject({ outcome: 'succeeded', counts: { total: 12, succeeded: 12, failed: 0 } });
    await eventually('every workspace Stopped', () => workspacesNot(sim, 'Stopped').length === 0);
    const calls = sim.requests().filter((entry) => entry.operation !== null);
    expect(calls.some((entry) => entry.fault === 'throttle')).toBe(true);
    // a re-read of the fleet that a later try makes may be throttled too (whether one lands on an
    // empty bucket depends on timing; test/unit/engine/waits.test.ts pins the rule down): each is
    // waited out, and a listing after it goes through
    const listings = calls.filter((entry) => entry.operation === 'listWorkgroups');
    const lastThrottled = listings.findLastIndex((entry) => entry.fault === 'throttle');
    if (lastThrottled >= 0)
      expect(listings.slice(lastThrottled + 1).some((entry) => entry.fault !== 'throttle')).toBe(true);
    // no throttle was counted as an attempt, and each record says what throttling cost
    for (const target of run.targets) expect(target.attempts).toBe(1);
    const throttled = run.targets.reduce((sum, target) => sum + (target.throttled ?? 0), 0);
    expect(throttled).toBeGreaterThan(0);
    expect(engine.lines('target attempt failed; retrying')).toEqual([]);
    expect(engine.lines('throttled; waiting (not counted)')).toHaveLength(throttled);
    // every throttled pause was tried again once its Retry-After (1 s) had passed, not before
    for (const made of pauseRequests(sim).values()) {
      expect(made.at(-1)?.status).toBe(200);
      for (const [index, call] of made.entries()) {
        const next = made[index + 1];
        if (call.status === 429 && next) expect(next.at - call.at).toBeGreaterThanOrEqual(990);
      }
    }
  });

  it('a run the API throttles without end (429 with no Retry-After) ends at its timeout, each target saying it was still throttled', async () => {
    const proxy = await startRefusingProxy(harness.sim);
    try {
      for (const ws of harness.sim.state.workspaces) {
        proxy.refuse({
          method: 'POST',
          path: `/controller/v4/v2/workgroups/${ws.workgroup_id}/workspaces/${ws.workspace_id}/pause`,
          status: 429,
          type: 'Quota-Exceed',
        });
      }
      const engine = harness.engine('throttled-out');
      engine.worker(proxy.sim.url);
      const policy = pausePolicy('retry: { attempts: 2, backoff: 1s, strategy: fixed }', 'timeout: 4s');
      const run = await engine.waitForRun(await engine.enqueue(policy, 'fleet-pause'), 20_000);

      expect(run).toMatchObject({
        outcome: 'failed',
        reason: 'the run timed out after 4000 ms',
        counts: { total: 12, failed: 12 },
      });
      expect(run.durationMs).toBeGreaterThanOrEqual(4_000);
      expect(run.durationMs).toBeLessThan(6_000);
      for (const target of run.targets) {
        // 0.5 to 1 s between tries (the fixed backoff, jittered): at least 4 throttled tries in 4 s;
        // the few ms of a try make a target rarely caught in one when the timeout comes
        expect(target.outcome).toBe('failed');
        expect(target.throttled).toBeGreaterThanOrEqual(4);
        expect(target.error?.message).toMatch(
          /^(still throttled when the run ended|the run ended during try \d+), after \d+ throttled tries/,
        );
      }
      const stillThrottled = run.targets.filter((target) =>
        target.error?.message.startsWith('still throttled'),
      );
      expect(stillThrottled.length).toBeGreaterThan(0);
      for (const target of stillThrottled) {
        expect(target).toMatchObject({ attempts: 0, error: { type: 'Quota-Exceed', status: 429 } });
      }
      expect(engine.lines('target failed')).toEqual([]);
      expect(workspacesNot(harness.sim, 'Active')).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
