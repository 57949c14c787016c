import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import type { RunSummary } from '../../../src/engine/index.js';
import {
  InMemoryNotificationMemory,
  Notifier,
  type RunPayload,
  type SlackMessage,
} from '../../../src/notify/index.js';
import { workspaceStatusFields } from '../../../src/sim/status.js';
import { clockAt, FRIDAY_EVENING, MONDAY_MORNING } from '../../helpers/clock.js';
import { captureLog, type Engine, eventually, useEngineHarness } from '../../helpers/engine.js';

/**
 * A window's notifications end to end: a worker reconciles a window over the simulator and tells
 * a local webhook receiver what it did, with a link to the run in the console.
 */

const harness = useEngineHarness({ workgroups: 2, workspacesPerWorkgroup: 3 });
const CONSOLE = 'https://ops.example.com/nightshift';

let receiver: ScriptedServer;
const notifiers: Notifier[] = [];

beforeAll(async () => {
  receiver = await startScriptedServer();
  receiver.replyJson(200, { ok: true });
});

afterEach(async () => {
  await Promise.all(notifiers.splice(0).map((notifier) => notifier.close()));
  receiver.requests.length = 0;
});

afterAll(async () => {
  await receiver.close();
});

/** Sinks `ops` (json) and `chat` (slack) with the default events; `drift` hears drift-persists only. */
const policy = (window = '') => `version: 1
pricing: { currency: EUR, default: 1.5 }
notifications:
  ops: { url: "${receiver.url}/ops" }
  chat: { url: "${receiver.url}/chat", format: slack }
  drift: { url: "${receiver.url}/drift", on: [drift-persists] }
windows:
  office:
    target: { workgroups: ["*"] }
    uptime: "Mon-Fri 07:30-19:30"
    timezone: Europe/Berlin
    notify: [ops, chat, drift]
${window}`;

/** One notifier for every run of a test, as a worker has, with its lines kept (at debug). */
function notifier() {
  const { log, lines } = captureLog('debug');
  const made = new Notifier({ memory: new InMemoryNotificationMemory(), log, consoleUrl: CONSOLE });
  notifiers.push(made);
  return { notifier: made, lines };
}

/** A worker whose clock reads `iso` reconciles the window once; resolves once its sinks were handled. */
async function reconcileAt(
  engine: Engine,
  iso: string,
  told: ReturnType<typeof notifier>,
  text = policy(),
): Promise<RunSummary> {
  const worker = engine.worker(harness.sim.url, { clock: clockAt(iso), notifier: told.notifier });
  try {
    const run = await engine.waitForRun(await engine.enqueue(text, 'office'));
    // every sink of the run answered for: a message sent, or nothing it listens to
    await eventually(`the sinks of ${run.runId} handled`, () => {
      const handled = told.lines.filter(
        (line) => line.runId === run.runId && ['notification sent', 'nothing to notify'].includes(line.msg),
      );
      return handled.length === 3;
    });
    return run;
  } finally {
    await worker.close(1_000);
  }
}

const bodies = (path: string) =>
  receiver.requests.filter((request) => request.url === path).map((request) => JSON.parse(request.body));

describe('a window tells its sinks what it did', () => {
  it('an edge sends one acted message per sink with its counts, hourly cost and console link; a reconciliation that changed nothing sends none', async () => {
    harness.sim.reset();
    const engine = harness.engine('window-acted');
    const told = notifier();
    const evening = await reconcileAt(engine, FRIDAY_EVENING, told);
    expect(evening.counts).toMatchObject({ succeeded: 6 });

    const [json, ...moreJson] = bodies('/ops') as RunPayload[];
    expect(moreJson).toEqual([]);
    expect(json).toMatchObject({
      events: ['acted'],
      job: 'office',
      runId: evening.runId,
      acted: { paused: 6, resumed: 0, failed: 0, hourlyCostAvoided: 9, currency: 'EUR', unpriced: 0 },
      link: `${CONSOLE}/runs/${encodeURIComponent(evening.runId)}`,
    });
    const [slack, ...moreSlack] = bodies('/chat') as SlackMessage[];
    expect(moreSlack).toEqual([]);
    expect(slack?.text).toBe(
      'nightshift: office: off period: paused 6, resumed 0; about 9.00 EUR an hour avoided',
    );
    expect(JSON.stringify(slack?.blocks)).toContain(`${CONSOLE}/runs/`);
    expect(bodies('/drift')).toEqual([]);

    const night = await reconcileAt(engine, '2026-11-20T23:00:00Z', told);
    expect(night.counts.total).toBe(0);
    expect(receiver.requests).toHaveLength(2);

    await eventually('every workspace Stopped', () =>
      harness.sim.state.workspaces.every((ws) => ws.status === 'Stopped'),
    );
    const morning = await reconcileAt(engine, MONDAY_MORNING, told);
    expect(morning.counts).toMatchObject({ succeeded: 6 });
    expect(bodies('/ops').at(-1)).toMatchObject({
      events: ['acted'],
      runId: morning.runId,
      acted: { paused: 0, resumed: 6, failed: 0, hourlyCostAvoided: null },
    });
    expect(receiver.requests).toHaveLength(4);
  });

  it('drift left for driftPersistsAfter reconciliations raises drift-persists once, not at every reconciliation after', async () => {
    harness.sim.reset();
    const engine = harness.engine('window-drift');
    const told = notifier();
    const text = policy('    driftPersistsAfter: 2\n');
    await reconcileAt(engine, FRIDAY_EVENING, told, text);
    // started by hand in off hours: without enforce the window leaves it, as drift
    const [byHand] = harness.sim.state.workspaces;
    if (!byHand) throw new Error('no workspace');
    await eventually('paused', () => byHand.status === 'Stopped');
    Object.assign(byHand, workspaceStatusFields('Active'));

    const first = await reconcileAt(engine, '2026-11-20T21:00:00Z', told, text);
    expect(first.evidence?.window).toMatchObject({ drift: 1, driftStreak: { reconciliations: 1 } });
    expect(bodies('/drift')).toEqual([]);
    const second = await reconcileAt(engine, '2026-11-20T22:00:00Z', told, text);
    const [told2, ...more] = bodies('/drift') as RunPayload[];
    expect(more).toEqual([]);
    expect(told2).toMatchObject({
      events: ['drift-persists'],
      runId: second.runId,
      driftPersists: { workspaces: 1, reconciliations: 2 },
    });
    await reconcileAt(engine, '2026-11-20T23:00:00Z', told, text);
    expect(bodies('/drift')).toHaveLength(1);
  });
});
