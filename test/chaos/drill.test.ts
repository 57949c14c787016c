import { describe, expect, it } from 'vitest';
import { assertDistFresh, formatReport, runChaosDrill } from '../../bench/harness/chaos-drill.js';

/**
 * The chaos drill, short: 200 workspaces, 3 workers, 2 schedulers, ticks every 10 s (pause,
 * resume, pause…) for 36 s of chaos (a worker SIGKILLed about every 12 s, always one executing
 * a run; Redis down for 1.5 s once; a scheduler SIGKILLed once), then one tick in quiet, without
 * the API's faults. About
 * 75 s. `npm run chaos` runs it at full size; bench/harness/chaos-drill.ts defines every figure.
 */
describe('chaos drill (short)', () => {
  it('loses no run, duplicates none, and leaves every workspace in the state of the last action', async () => {
    assertDistFresh();
    const report = await runChaosDrill({
      workgroups: 20,
      workspacesPerWorkgroup: 10,
      tickSeconds: 10,
      chaosMs: 36_000,
      killEveryMs: 12_000,
      concurrency: 20,
      seed: 7,
    });
    const text = formatReport(report);
    const failed = report.goals.filter((goal) => !goal.ok).map((goal) => `${goal.name}: ${goal.detail}`);
    expect(failed, text).toEqual([]);
    expect(report.ticks.executed, text).toBe(report.ticks.expected);
    expect(report.ticks.expected, text).toBeGreaterThanOrEqual(5);
    expect(report.ticks.lost, text).toEqual([]);
    expect(report.ticks.duplicated, text).toEqual([]);
    expect(report.desiredState.percent, text).toBe(100);
    // the chaos happened: kills mid-run, the Redis restart and the scheduler restart
    expect(report.kills.filter((kill) => kill.runs.length > 0).length, text).toBeGreaterThanOrEqual(1);
    expect(report.restarts.map((restart) => restart.what).sort(), text).toEqual(['redis', 'scheduler']);
    expect(report.api.injected.error + report.api.injected.hang, text).toBeGreaterThan(0);
  }, 180_000);
});
