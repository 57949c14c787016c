import { afterEach, describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import type { RunSummary } from '../../../src/engine/index.js';
import {
  type ConsoleSources,
  type FleetView,
  Metrics,
  type OpsServer,
  startOpsServer,
} from '../../../src/ops/index.js';
import { checkPolicy } from '../../../src/policy/index.js';
import {
  AuditTrail,
  FindingsLedger,
  RedisFleetListings,
  WorkspaceHistory,
} from '../../../src/store/index.js';
import { clockAt, FRIDAY_EVENING, MONDAY_MORNING } from '../../helpers/clock.js';
import { type Engine, eventually, useEngineHarness } from '../../helpers/engine.js';

/**
 * What the console shows right after a run that paused or resumed workspaces: the states that run
 * left, never the listing it started from. Every pause or resume stays in transition for 3 s on
 * the simulator, so the statuses the run's records say it left are the simulator's too.
 */
const harness = useEngineHarness({ workgroups: 2, workspacesPerWorkgroup: 6 }, { transitionMs: 3_000 });

const POLICY = `version: 1
windows:
  office:
    target: { workgroups: ["*"] }
    uptime: "Mon-Fri 07:30-19:30"
    timezone: Europe/Berlin
    every: 1h
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

const servers: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** The console on the engine's Redis, deciding windows at the instant `now` reads. */
async function consoleOf(engine: Engine, now: () => Date): Promise<string> {
  const sources: ConsoleSources = {
    history: engine.history,
    policies: engine.policies,
    suspensions: engine.suspensions,
    state: engine.state,
    listings: new RedisFleetListings(engine.redis, { prefix: engine.prefix }),
    findings: new FindingsLedger(engine.redis, { prefix: engine.prefix }),
    timeline: new WorkspaceHistory(engine.redis, { prefix: engine.prefix }),
    audit: new AuditTrail(engine.redis, { prefix: engine.prefix }),
    inProgress: async () => undefined,
    underWay: async () => [],
    readPolicy: (text, sha) =>
      checkPolicy(text, sha, { registry: actionRegistry, env: {} }).policy ?? 'unreadable',
    now,
  };
  const server = await startOpsServer({
    port: 0,
    redis: engine.redis,
    metrics: new Metrics({ processMetrics: false }),
    console: { sources },
  });
  servers.push(server);
  await engine.policies.setCurrent(await engine.policies.put(POLICY), { host: 'test' });
  return server.url;
}

/** A worker whose clock reads `iso`, and the run of `job` it then makes (recorded). */
async function runAt(engine: Engine, iso: string, job: string, options = {}): Promise<RunSummary> {
  const worker = engine.worker(harness.sim.url, { clock: clockAt(iso), ...options });
  try {
    return await engine.waitForRun(await engine.enqueue(POLICY, job), 30_000);
  } finally {
    await worker.close(1_000);
  }
}

async function fleetOf(url: string): Promise<{ view: FleetView; page: string }> {
  const view = (await (await fetch(`${url}/api/fleet`)).json()) as FleetView;
  return { view, page: await (await fetch(`${url}/fleet`)).text() };
}

const statuses = () => harness.sim.state.workspaces.map((ws) => ws.status);
const WORKSPACES = 12;

describe('the console right after a run that paused or resumed workspaces', () => {
  it('shows the states an edge left as soon as its run is recorded: paused ones stopping, resumed ones resuming, nothing drifting', async () => {
    harness.sim.reset();
    const engine = harness.engine('console-edge');
    const clock = clockAt(FRIDAY_EVENING);
    const url = await consoleOf(engine, () => new Date(clock.now()));

    const paused = await runAt(engine, FRIDAY_EVENING, 'office');
    expect(paused.counts).toMatchObject({ total: WORKSPACES, succeeded: WORKSPACES });
    const evening = await fleetOf(url);
    expect(evening.view.listing?.runId).toBe(paused.runId);
    expect(evening.view.counts).toMatchObject({ workspaces: WORKSPACES, owned: WORKSPACES, drifting: 0 });
    expect(evening.view.counts.byState.Active).toBeUndefined();
    expect((evening.view.counts.byState.Stopping ?? 0) + (evening.view.counts.byState.Stopped ?? 0)).toBe(
      WORKSPACES,
    );
    expect(evening.page).not.toMatch(/<strong>\d+<\/strong> Active/);
    expect(evening.page).toMatch(/<strong>0<\/strong> drifting/);

    await eventually('every workspace Stopped', () => statuses().every((status) => status === 'Stopped'));
    clock.set(MONDAY_MORNING);
    const resumed = await runAt(engine, MONDAY_MORNING, 'office');
    expect(resumed.counts).toMatchObject({ total: WORKSPACES, succeeded: WORKSPACES });
    const morning = await fleetOf(url);
    expect(morning.view.listing?.runId).toBe(resumed.runId);
    expect(morning.view.counts).toMatchObject({ owned: 0, drifting: 0 });
    expect(morning.view.counts.byState.Stopped).toBeUndefined();
    expect((morning.view.counts.byState.Resuming ?? 0) + (morning.view.counts.byState.Active ?? 0)).toBe(
      WORKSPACES,
    );
    expect(morning.page).not.toMatch(/<strong>\d+<\/strong> Stopped/);
  });

  it('shows what a run split into parts across workers paused, once the run is recorded', async () => {
    harness.sim.reset();
    const engine = harness.engine('console-split');
    const friday = clockAt(FRIDAY_EVENING);
    const url = await consoleOf(engine, () => new Date(friday.now()));
    const second = engine.worker(harness.sim.url, { partSize: 4 });
    try {
      const run = await runAt(engine, FRIDAY_EVENING, 'fleet-pause', { partSize: 4 });
      expect(run.counts).toMatchObject({ total: WORKSPACES, succeeded: WORKSPACES });
      const { view } = await fleetOf(url);
      expect(view.listing?.runId).toBe(run.runId);
      expect(view.counts.byState.Active).toBeUndefined();
      expect(view.counts.owned).toBe(WORKSPACES);
    } finally {
      await second.close(1_000);
    }
  });
});
