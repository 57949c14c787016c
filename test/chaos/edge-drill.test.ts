import { describe, expect, it } from 'vitest';
import { runEdgeDrill } from '../../bench/harness/edge-drill.js';
import { formatEdgeReport } from '../../bench/harness/edge-drill-report.js';
import { assertBuilt } from '../../bench/harness/nightshift-process.js';

/**
 * The edge drill's redis-outage scenario, short (issue 21): a window's off edge over 460
 * workspaces (30 × 20 outside prod-*, 200 ms a call, 16 at a time: about 6 s of pauses), two
 * workers and a scheduler with 3 s locks; Redis stopped 1.5 s into the edge for 5 s, longer than
 * the lock, so BullMQ hands the edge's run to a worker again while its first execution still has
 * pauses to make. The off period began at the last whole minute (the edge is the scheduler's first
 * reconciliation, `every: 2s`) and ends at the first whole minute 12 s after it, so the test takes
 * 35–90 s depending on the second it starts. `npm run chaos` runs every scenario at full size;
 * bench/harness/edge-drill.ts defines every figure.
 */
describe('edge drill (short): Redis away during a window’s off edge', () => {
  it('strands no workspace, pauses none twice, and its summaries say what the simulator saw', async () => {
    assertBuilt();
    const report = await runEdgeDrill({
      scenario: 'redis-outage',
      workgroups: 30,
      workspacesPerWorkgroup: 20,
      latencyMs: 200,
      transitionMs: 1_000,
      edge: 'soonest',
      everyS: 2,
      minOffS: 12,
      outageAfterS: 1.5,
      outageS: 5,
      lockMs: 3_000,
      settleTimeoutS: 30,
    });
    const text = formatEdgeReport(report);
    // the race was there to be lost: the edge's run delivered again while Redis was back
    const edge = report.executions.repeated.find((e) => e.run === report.struckRun);
    expect(edge?.count ?? 1, text).toBeGreaterThanOrEqual(2);
    const failed = report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
    expect(failed, text).toEqual([]);
    expect(report.stranded.count, text).toBe(0);
    expect(report.pauses.duplicates.count, text).toBe(0);
    expect(report.summaries.said, text).toBe(report.summaries.accepted);
    expect(report.handBack.code, text).toBe(0);
  }, 120_000);
});
