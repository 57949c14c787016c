import { describe, expect, it } from 'vitest';
import { seedState } from '../../../src/sim/index.js';
import { mutatingCalls, useActionSim, workspacesIn } from '../../helpers/actions.js';
import { eventually } from '../../helpers/engine.js';

const policy = (action: string, extra = '') => `version: 1
jobs:
  act:
    schedule: "0 20 * * *"
    action: ${action}
    target: { workgroups: ["dev-alpha"] }
${extra}`;

describe('pause and resume against the simulator', () => {
  // one story: the pause, then a dry run of the resume, then the resume of what the pause stopped
  const harness = useActionSim(
    () => seedState({ seed: 3, fleet: { workgroups: 4, workspacesPerWorkgroup: 4 } }),
    {
      resetEach: false,
    },
  );
  const devAlpha = () => workspacesIn(harness.sim.state, 'dev-alpha');

  it('pause stops every Active workspace of the target and skips the ones already stopped', async () => {
    const before = devAlpha();
    expect(before).toHaveLength(4);
    const active = before.filter((w) => w.status === 'Active').length;
    const { summary } = await harness.run(policy('pause'), 'act');
    expect(summary.outcome).toBe('succeeded');
    expect(summary.counts.succeeded).toBe(active);
    expect(summary.counts.skipped).toBe(before.length - active);
  });

  it('a dry run of resume calls read-only operations only and plans each stopped workspace', async () => {
    await eventually('the pauses done', () =>
      harness.sim.state.workspaces.every((ws) => ws.status !== 'Stopping'),
    );
    const run = await harness.run(policy('resume'), 'act', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.counts.planned + run.summary.counts.skipped).toBe(run.summary.counts.total);
  });

  it('resume waits until every workspace is Active and reports its time to ready', async () => {
    const { summary } = await harness.run(policy('resume', '    with: { waitReady: 30s }'), 'act');
    expect(summary.outcome).toBe('succeeded');
    for (const target of summary.targets) expect(target.detail?.timeToReadyMs ?? 0).toBeGreaterThanOrEqual(0);
    expect(new Set(devAlpha().map((w) => w.status))).toEqual(new Set(['Active']));
  });
});
