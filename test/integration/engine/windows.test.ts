import { describe, expect, it } from 'vitest';
import type { Hold, RunSummary } from '../../../src/engine/index.js';
import { workspaceStatusFields } from '../../../src/sim/status.js';
import { clockAt, FRIDAY_EVENING, MONDAY_MORNING } from '../../helpers/clock.js';
import { type Engine, eventually, useEngineHarness } from '../../helpers/engine.js';

/**
 * Windows through the real engine: a worker (and schedulers) on a real Redis, acting on the
 * simulator. Time of day comes from a clock shifted to the instant a test needs, running at real
 * speed, so an edge can be reached in seconds.
 */

const harness = useEngineHarness({ workgroups: 2, workspacesPerWorkgroup: 3 });

const policy = (extra = '', every = '5m') => `version: 1
windows:
  office:
    target: { workgroups: ["*"] }
    uptime: "Mon-Fri 07:30-19:30"
    timezone: Europe/Berlin
    every: ${every}
${extra}`;

const FRIDAY_NIGHT = '2026-11-20T23:00:00Z';

const statuses = () => harness.sim.state.workspaces.map((ws) => ws.status);
const workspace = (i: number) =>
  harness.sim.state.workspaces[i] as (typeof harness.sim.state.workspaces)[number];
const keyOf = (i: number) => `${workspace(i).workgroup_id}/${workspace(i).workspace_id}`;
const settled = (want: string) =>
  eventually(`every workspace ${want}`, () => statuses().every((status) => status === want));

/** A worker whose clock reads `iso`, and the run of the window it then makes. */
async function reconcileAt(engine: Engine, iso: string, text = policy()): Promise<RunSummary> {
  const worker = engine.worker(harness.sim.url, { clock: clockAt(iso) });
  try {
    return await engine.waitForRun(await engine.enqueue(text, 'office'));
  } finally {
    await worker.close(1_000);
  }
}

const outcomeOf = (run: RunSummary, i: number) => {
  const target = run.targets.find((t) => t.workspaceId === workspace(i).workspace_id);
  return target ? `${target.outcome}: ${target.reason}` : 'no record';
};

describe('a window reconciled by the engine', () => {
  it('outside uptime pauses every running workspace and owns the pauses; the next reconciliation changes nothing', async () => {
    harness.sim.reset();
    const engine = harness.engine('window-pause');
    const first = await reconcileAt(engine, FRIDAY_EVENING);
    expect(first).toMatchObject({ outcome: 'succeeded', counts: { total: 6, succeeded: 6 } });
    expect(first.evidence?.window).toMatchObject({ up: false, workspaces: 6, drift: 0, acted: 6 });
    const owned = await engine.state.ledger.all();
    expect([...owned.values()].map((r) => [r.owner, r.ownerKind, r.state])).toEqual(
      Array(6).fill(['office', 'window', 'confirmed']),
    );
    await settled('Stopped');

    const calls = harness.sim.requests().length;
    const second = await reconcileAt(engine, FRIDAY_NIGHT);
    expect(second).toMatchObject({ outcome: 'succeeded', counts: { total: 0 } });
    expect(second.evidence?.window).toMatchObject({ workspaces: 6, drift: 0, acted: 0 });
    // one listing, no write
    expect(
      harness.sim
        .requests()
        .slice(calls)
        .map((entry) => entry.operation),
    ).toEqual(['listWorkgroups']);
  });

  it('leaves a workspace started by hand in off hours running and reports it as drift; with enforce: true pauses it again', async () => {
    harness.sim.reset();
    const engine = harness.engine('window-drift');
    await reconcileAt(engine, FRIDAY_EVENING);
    await settled('Stopped');
    // started by hand at once: the next listing, asked for after the pause was answered, shows it
    Object.assign(workspace(0), workspaceStatusFields('Active'));

    const lenient = await reconcileAt(engine, FRIDAY_NIGHT);
    expect(lenient.outcome).toBe('succeeded');
    expect(outcomeOf(lenient, 0)).toBe(
      'skipped: drift: wanted Stopped, is Active: Active outside uptime (started by hand?); enforce: false leaves it running',
    );
    expect(lenient.evidence?.window).toMatchObject({ drift: 1 });
    expect((await engine.state.windows.get('office'))?.drift).toBe(1);
    expect(workspace(0).status).toBe('Active');
    expect((await engine.state.ledger.all()).has(keyOf(0))).toBe(false);

    const strict = await reconcileAt(engine, FRIDAY_NIGHT, policy('    enforce: true'));
    expect(outcomeOf(strict, 0)).toBe('succeeded: Active outside uptime: pausing again (enforce)');
    expect((await engine.state.ledger.all()).get(keyOf(0))?.runId).toBe(strict.runId);
  });

  it('a reconciliation taken over reports every workspace its earlier execution paused: intents confirmed from the listing, request IDs on record, all counted as acted', async () => {
    harness.sim.reset();
    const engine = harness.engine('window-takeover');
    const runId = 'office@taken-over';
    // what the earlier execution left: two pauses whose answers it never heard, one it confirmed,
    // all three made (Stopped), none checkpointed
    for (const i of [0, 1, 2]) {
      await engine.state.ledger.intend({
        key: keyOf(i),
        workgroupId: workspace(i).workgroup_id,
        workspaceId: workspace(i).workspace_id,
        owner: 'office',
        ownerKind: 'window',
        runId,
        state: 'intent',
        intendedAt: new Date(Date.now() - 60_000).toISOString(),
        intentId: `earlier-${i}`,
      });
      Object.assign(workspace(i), workspaceStatusFields('Stopped'));
    }
    await engine.state.ledger.confirm(keyOf(2), 'office', {
      pausedAt: new Date().toISOString(),
      requestId: 'req-earlier',
    });

    const worker = engine.worker(harness.sim.url, { clock: clockAt(FRIDAY_EVENING) });
    try {
      const run = await engine.waitForRun(await engine.enqueue(policy(), 'office', { runId }));
      expect(run.counts).toMatchObject({ total: 6, succeeded: 6 });
      expect(run.evidence?.window).toMatchObject({ acted: 6, stranded: 0 });
      for (const i of [0, 1])
        expect(outcomeOf(run, i)).toBe(
          'succeeded: paused by this run before (a lost answer, or a worker that stopped): its intent was recorded before the call',
        );
      expect(outcomeOf(run, 2)).toBe('succeeded: paused by an earlier execution of this run (Stopped now)');
      expect(run.targets.find((t) => t.workspaceId === workspace(2).workspace_id)?.requestIds).toEqual([
        'req-earlier',
      ]);
      const owned = await engine.state.ledger.all();
      expect([0, 1, 2, 3, 4, 5].map((i) => owned.get(keyOf(i))?.state)).toEqual(Array(6).fill('confirmed'));
      // savings count the pauses whose confirmation was never written, from their intent
      expect(owned.get(keyOf(0))?.pausedAt).toBe(owned.get(keyOf(0))?.intendedAt);
    } finally {
      await worker.close(1_000);
    }
  });

  it('at the start of uptime hands back only what it paused: not what a person stopped, nor what a job paused', async () => {
    harness.sim.reset();
    for (const i of [1, 2]) Object.assign(workspace(i), workspaceStatusFields('Stopped'));
    const engine = harness.engine('window-handback');
    await engine.state.ledger.put({
      key: keyOf(2),
      workgroupId: workspace(2).workgroup_id,
      workspaceId: workspace(2).workspace_id,
      owner: 'evening-pause',
      ownerKind: 'job',
      runId: 'evening-pause@earlier',
      state: 'confirmed',
      intendedAt: new Date().toISOString(),
      pausedAt: new Date().toISOString(),
    });
    await reconcileAt(engine, FRIDAY_EVENING);
    await settled('Stopped');

    const morning = await reconcileAt(engine, MONDAY_MORNING);
    expect(morning.outcome).toBe('succeeded');
    expect(morning.counts).toMatchObject({ total: 4, succeeded: 4 });
    await eventually('the window’s workspaces back', () =>
      [0, 3, 4, 5].every((i) => workspace(i).status === 'Active'),
    );
    expect([workspace(1).status, workspace(2).status]).toEqual(['Stopped', 'Stopped']);
    const owners = [...(await engine.state.ledger.all()).values()].map((r) => r.owner);
    expect(owners).toEqual(['evening-pause']);
  });

  it('a hold keeps a workspace running through off hours until it runs out; then the window pauses it', async () => {
    harness.sim.reset();
    const engine = harness.engine('window-hold');
    const hold: Hold = {
      pattern: `${workspace(0).workgroup_id}/${workspace(0).workspace_id}`,
      state: 'active',
      until: '2026-11-20T22:00:00Z',
      reason: 'customer demo',
      by: 'ana@laptop',
      createdAt: '2026-11-20T18:00:00Z',
    };
    await engine.state.holds.place(hold);
    const evening = await reconcileAt(engine, FRIDAY_EVENING);
    expect(evening.counts).toMatchObject({ succeeded: 5 });
    expect(evening.evidence?.window).toMatchObject({ held: 1, drift: 0 });
    expect(workspace(0).status).toBe('Active');

    const later = await reconcileAt(engine, FRIDAY_NIGHT);
    expect(outcomeOf(later, 0)).toBe(
      'succeeded: outside uptime: pausing (left over from the period’s start)',
    );
    expect((await engine.state.holds.log()).map((event) => event.event)).toEqual(['expired', 'held']);
  });
});

describe('windows on the scheduler', () => {
  it('forgets the state of a window the policy no longer has when it loads it', async () => {
    const engine = harness.engine('window-removed');
    await engine.state.windows.save('office', { period: 'down@x', pending: [], drift: 2 });
    await engine.state.windows.save('gone', { period: 'down@x', pending: [], drift: 5 });
    const text = policy();
    await engine.scheduler().load(engine.parse(text), text);
    expect([...(await engine.state.windows.all()).keys()]).toEqual(['office']);
  });

  it('two schedulers hand each interval tick and edge of one window to the queue once: no run twice', async () => {
    harness.sim.reset();
    const engine = harness.engine('window-schedulers');
    // two seconds before Friday's 19:30 edge, reconciled every second besides
    const clock = clockAt('2026-11-20T18:29:58Z');
    const policyText = policy('', '1s');
    const parsed = engine.parse(policyText);
    const a = engine.scheduler({ clock, leadMs: 500 });
    const b = engine.scheduler({ clock, leadMs: 500 });
    await Promise.all([a.load(parsed, policyText), b.load(parsed, policyText)]);
    await Promise.all([a.start(), b.start()]);
    engine.worker(harness.sim.url, { clock });
    await eventually('a run at the edge recorded', async () =>
      (await engine.history.list({ job: 'office', limit: 20 })).find(
        (run) => run.scheduledAt === '2026-11-20T18:30:00.000Z' && run.outcome !== 'skipped',
      ),
    );
    await a.stop();
    await b.stop();
    const jobs = await engine.queue.getJobs(['completed', 'failed', 'waiting', 'active', 'delayed']);
    const scheduled = jobs.map((job) => job.data.scheduledAt).filter((at): at is string => at !== undefined);
    expect(new Set(scheduled).size).toBe(scheduled.length);
    expect(scheduled).toContain('2026-11-20T18:30:00.000Z');
    const edgeRun = (await engine.history.list({ job: 'office', limit: 50 })).find(
      (run) => run.scheduledAt === '2026-11-20T18:30:00.000Z',
    );
    expect(edgeRun).toMatchObject({ outcome: 'succeeded', counts: { succeeded: 6 } });
  });
});
