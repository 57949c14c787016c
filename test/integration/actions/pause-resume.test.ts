import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatorHandle, seedState, startSimulator } from '../../../src/sim/index.js';
import { mutatingCalls, runJob } from '../../helpers/actions.js';
import { eventually } from '../../helpers/engine.js';

const policy = (action: string, extra = '') => `version: 1
jobs:
  act:
    schedule: "0 20 * * *"
    action: ${action}
    target: { workgroups: ["dev-alpha"] }
${extra}`;

describe('pause and resume against the simulator', () => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSimulator({
      port: 0,
      transitionMs: 50,
      state: seedState({ seed: 3, fleet: { workgroups: 4, workspacesPerWorkgroup: 4 } }),
    });
  });
  afterAll(() => sim.close());

  it('pause stops every Active workspace of the target and skips the ones already stopped', async () => {
    const wg = sim.state.workgroups.find((w) => w.name === 'dev-alpha');
    const before = sim.state.workspaces.filter((w) => w.workgroup_id === wg?.workgroup_id);
    expect(before).toHaveLength(4);
    const active = before.filter((w) => w.status === 'Active').length;
    const { summary } = await runJob(sim, policy('pause'), 'act');
    expect(summary.outcome).toBe('succeeded');
    expect(summary.counts.succeeded).toBe(active);
    expect(summary.counts.skipped).toBe(before.length - active);
  });

  it('a dry run of resume calls read-only operations only and plans each stopped workspace', async () => {
    await eventually('the pauses done', () => sim.state.workspaces.every((ws) => ws.status !== 'Stopping'));
    const run = await runJob(sim, policy('resume'), 'act', { dryRun: true });
    expect(mutatingCalls(run)).toEqual([]);
    expect(run.summary.counts.planned + run.summary.counts.skipped).toBe(run.summary.counts.total);
  });

  it('resume waits until every workspace is Active and reports its time to ready', async () => {
    const { summary } = await runJob(sim, policy('resume', '    with: { waitReady: 30s }'), 'act');
    expect(summary.outcome).toBe('succeeded');
    for (const target of summary.targets) expect(target.detail?.timeToReadyMs ?? 0).toBeGreaterThanOrEqual(0);
    const wg = sim.state.workgroups.find((w) => w.name === 'dev-alpha');
    const statuses = sim.state.workspaces
      .filter((w) => w.workgroup_id === wg?.workgroup_id)
      .map((w) => w.status);
    expect(new Set(statuses)).toEqual(new Set(['Active']));
  });
});
