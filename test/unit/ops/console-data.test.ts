import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import type { Workgroup } from '../../../src/api/index.js';
import {
  type FleetListing,
  type Hold,
  type Ownership,
  type PausedInterval,
  type RunSummary,
  savingsReport,
  summarize,
  WINDOW_ACTION,
  type WindowState,
} from '../../../src/engine/index.js';
import { FleetData } from '../../../src/ops/console/data/fleet.js';
import { savingsView } from '../../../src/ops/console/data/savings.js';
import { schedulesView } from '../../../src/ops/console/data/schedules.js';
import { type ConsoleSources, PolicyInForce } from '../../../src/ops/console/data/sources.js';
import { timelineView } from '../../../src/ops/console/data/timeline.js';
import { checkPolicy } from '../../../src/policy/index.js';
import type { HoldEvent } from '../../../src/store/holds.js';
import type { Suspension, WorkspaceRun } from '../../../src/store/index.js';

const NOW = new Date('2026-11-25T21:00:00Z');
const SHA = 'a'.repeat(64);

/** Uptime 08:00-18:00 Berlin on weekdays: 22:00 Berlin on a Wednesday is off hours. */
const POLICY = `version: 1
windows:
  office-hours:
    target: { workgroups: ["staging"] }
    uptime: "Mon-Fri 08:00-18:00"
    timezone: Europe/Berlin
jobs:
  dev-pause:
    schedule: "0 20 * * 1-5"
    timezone: Europe/Berlin
    action: pause
    target: { workgroups: ["dev"], exclude: ["dev/keep"] }
  qa-resume:
    schedule: "0 7 * * 1"
    action: resume
    target: { workgroups: ["qa"] }
    suspend: true
  weekly-drill:
    schedule: "0 3 * * 0"
    action: pause
    target: { workgroups: ["qa"] }
`;

function workgroup(id: string, workspaces: [string, string][]): Workgroup {
  return {
    workgroup_id: id,
    name: id,
    workspaces: workspaces.map(([name, status]) => ({
      workspace_id: `${id}-${name}`,
      name,
      status,
      workgroup_id: id,
    })),
  } as Workgroup;
}

const LISTING: FleetListing = {
  at: new Date(NOW.getTime() - 120_000).toISOString(),
  runId: 'run-list',
  job: 'dev-pause',
  workgroups: [
    workgroup('dev', [
      ['a', 'Stopped'],
      ['keep', 'Active'],
    ]),
    workgroup('staging', [
      ['s1', 'Stopped'],
      ['s2', 'Active'],
    ]),
    workgroup('qa', [['q1', 'Stopping']]),
  ],
};

function ownership(key: string, owner: string, kind: 'job' | 'window'): Ownership {
  const [workgroupId = '', workspaceId = ''] = key.split('/');
  return {
    key,
    workgroupId,
    workspaceId,
    workgroupName: workgroupId,
    workspaceName: workspaceId.split('-').at(-1),
    owner,
    ownerKind: kind,
    runId: 'run-1',
    state: 'confirmed',
    intendedAt: '2026-11-25T19:00:00.000Z',
    pausedAt: '2026-11-25T19:00:01.000Z',
    pricePerHour: 1,
    currency: 'EUR',
  };
}

function run(job: string, runId: string, finishedAt: string): RunSummary {
  return summarize(
    { runId, job, action: 'pause', trigger: 'schedule', dryRun: false },
    { startedAt: new Date(Date.parse(finishedAt) - 1000), finishedAt: new Date(finishedAt) },
  );
}

interface Fixture {
  owned?: Ownership[];
  holds?: Hold[];
  intervals?: PausedInterval[];
  suspensions?: [string, Suspension][];
  runs?: RunSummary[];
  windows?: [string, WindowState][];
  listing?: FleetListing | undefined;
  workspaceRuns?: WorkspaceRun[];
  journal?: Ownership[];
  holdLog?: HoldEvent[];
}

function sources(fixture: Fixture = {}): ConsoleSources & { listingReads: number } {
  const runs = fixture.runs ?? [];
  const source = {
    listingReads: 0,
    history: {
      get: async (id: string) => runs.find((r) => r.runId === id),
      list: async ({ job, limit = 50 }: { job?: string; limit?: number } = {}) =>
        runs.filter((r) => job === undefined || r.job === job).slice(0, limit),
    },
    policies: {
      current: async () => ({
        sha: SHA,
        loadedAt: '2026-11-25T08:00:00.000Z',
        host: 'sched-1',
        text: POLICY,
        stored: { text: POLICY, verdict: 'signed' as const },
      }),
      rejected: async () => undefined,
    },
    suspensions: { all: async () => new Map(fixture.suspensions ?? []) },
    state: {
      ledger: {
        all: async () => new Map((fixture.owned ?? []).map((o) => [o.key, o])),
        intervalsSince: async (since: Date) =>
          (fixture.intervals ?? []).filter((i) => Date.parse(i.to) >= since.getTime()),
      },
      holds: {
        active: async () => fixture.holds ?? [],
        log: async (limit: number) => (fixture.holdLog ?? []).slice(0, limit),
      },
      windows: { all: async () => new Map(fixture.windows ?? []) },
    },
    listings: {
      latestAt: async () => ('listing' in fixture ? fixture.listing : LISTING)?.at,
      latest: async () => {
        source.listingReads += 1;
        return 'listing' in fixture ? fixture.listing : LISTING;
      },
    },
    findings: { open: async () => [] },
    timeline: {
      runs: async () => fixture.workspaceRuns ?? [],
      ownership: async (key: string) => ({
        owned: (fixture.owned ?? []).find((o) => o.key === key),
        journal: (fixture.journal ?? []).find((o) => o.key === key),
      }),
      closedPauses: async (key: string, scan: number) => {
        const newest = [...(fixture.intervals ?? [])].sort((a, b) => (a.to < b.to ? 1 : -1)).slice(0, scan);
        return { pauses: newest.filter((i) => i.key === key), scanned: newest.length };
      },
    },
    readPolicy: (text: string) =>
      checkPolicy(text, 'policy', { registry: actionRegistry, env: {}, unsetVariables: 'warning' }).policy ??
      'unreadable',
    now: () => NOW,
  };
  return source as unknown as ConsoleSources & { listingReads: number };
}

describe('the console schedules view', () => {
  it('lists every job and window with its next firing in UTC and local time, its last run, and who suspended it', async () => {
    const src = sources({
      runs: [run('dev-pause', 'r2', '2026-11-25T19:00:05Z'), run('dev-pause', 'r1', '2026-11-24T19:00:05Z')],
      suspensions: [
        [
          'weekly-drill',
          { job: 'weekly-drill', since: '2026-11-20T10:00:00.000Z', by: 'ana', reason: 'migration' },
        ],
      ],
    });
    const view = await schedulesView(src, new PolicyInForce(src));
    expect(view.policy).toMatchObject({ sha: SHA, host: 'sched-1', rejected: null });
    const byName = new Map(view.entries.map((entry) => [entry.name, entry]));
    expect([...byName.keys()].sort()).toEqual(['dev-pause', 'office-hours', 'qa-resume', 'weekly-drill']);
    const pause = byName.get('dev-pause');
    expect(pause?.next).toMatchObject({ at: '2026-11-26T19:00:00Z', timezone: 'Europe/Berlin' });
    expect(pause?.next?.local).toContain('20:00');
    expect(pause?.target).toBe('workgroups dev / workspaces * / except dev/keep');
    expect(pause?.lastRun?.runId).toBe('r2');
    expect(byName.get('office-hours')).toMatchObject({ kind: 'window', next: { edge: 'uptime starts' } });
    expect(byName.get('qa-resume')).toMatchObject({ suspended: { by: 'policy' }, next: null });
    expect(byName.get('weekly-drill')?.suspended).toMatchObject({ by: 'command' });
    expect(byName.get('weekly-drill')?.suspended?.detail).toContain('ana');
    expect(view.recent.map((r) => (r.kind === 'run' ? r.run.runId : 'quiet'))).toEqual(['r2', 'r1']);
  });

  it('folds the window reconciliations that changed nothing, so the runs of every other job stay on the page', async () => {
    const at = (minutesAgo: number) => new Date(NOW.getTime() - minutesAgo * 60_000).toISOString();
    const quiet = (minutesAgo: number) =>
      summarize(
        {
          runId: `office-hours@${minutesAgo}`,
          job: 'office-hours',
          action: WINDOW_ACTION,
          trigger: 'schedule',
          dryRun: false,
        },
        { startedAt: new Date(Date.parse(at(minutesAgo)) - 500), finishedAt: new Date(at(minutesAgo)) },
      );
    // a reconciliation a minute for an hour, the drill and the pause run among them
    const runs = [
      ...Array.from({ length: 30 }, (_, i) => quiet(i)),
      run('weekly-drill', 'drill-1', at(30.5)),
      ...Array.from({ length: 29 }, (_, i) => quiet(31 + i)),
      run('dev-pause', 'pause-1', at(60.5)),
    ];
    const src = sources({ runs });
    const view = await schedulesView(src, new PolicyInForce(src));
    expect(
      view.recent.map((entry) => (entry.kind === 'run' ? entry.run.runId : `${entry.count} quiet`)),
    ).toEqual(['30 quiet', 'drill-1', '29 quiet', 'pause-1']);
    expect(view.recent[0]).toMatchObject({
      kind: 'quiet',
      jobs: [{ job: 'office-hours', count: 30 }],
      from: at(29),
      to: at(0),
      latest: { runId: 'office-hours@0' },
    });
  });

  it('shows a window’s skip calendars, and calls out today when it is one of their dates', async () => {
    const text = POLICY.replace(
      'windows:',
      'calendars:\n  holidays: ["2026-11-25", "2026-12-24", "2026-12-25", "2026-12-31"]\nwindows:',
    ).replace(
      '    timezone: Europe/Berlin\njobs:',
      '    timezone: Europe/Berlin\n    skip: [holidays]\njobs:',
    );
    const src = sources();
    src.policies.current = async () => ({
      sha: SHA,
      loadedAt: '2026-11-25T08:00:00.000Z',
      host: 'sched-1',
      text,
      stored: { text, verdict: 'signed' as const },
    });
    const view = await schedulesView(src, new PolicyInForce(src));
    const byName = new Map(view.entries.map((entry) => [entry.name, entry]));
    // 22:00 in Berlin on the 25th: today is a holiday there
    expect(byName.get('office-hours')?.skip).toEqual({
      calendars: ['holidays'],
      today: '2026-11-25',
      upcoming: ['2026-12-24', '2026-12-25', '2026-12-31'],
    });
    expect(byName.get('dev-pause')?.skip).toBeNull();
  });

  it('says why it lists nothing when no scheduler has recorded a policy', async () => {
    const src = sources();
    src.policies.current = async () => undefined;
    const view = await schedulesView(src, new PolicyInForce(src));
    expect(view.policy).toBeNull();
    expect(view.entries).toEqual([]);
    expect(view.problem).toMatch(/no scheduler has recorded/);
  });

  it('lists nothing of a policy in force its key did not sign: anyone who can write to Redis can name one', async () => {
    const src = sources();
    src.policies.current = async () => ({
      sha: SHA,
      loadedAt: '2026-11-25T08:00:00.000Z',
      host: 'forger',
      text: undefined,
      stored: { text: POLICY, verdict: 'unsigned' as const },
    });
    const view = await schedulesView(src, new PolicyInForce(src));
    expect(view.entries).toEqual([]);
    expect(view.problem).toBe(
      `policy ${SHA.slice(0, 12)} is not signed with this process's NIGHTSHIFT_POLICY_KEY, so it is not shown`,
    );
  });
});

describe('the console fleet view', () => {
  const hold: Hold = {
    pattern: 'qa/*',
    state: 'stopped',
    until: '2026-11-26T08:00:00.000Z',
    reason: 'migration',
    by: 'ana',
    createdAt: '2026-11-25T10:00:00.000Z',
  };

  it('shows every workspace of the last listing with its state, owner, hold and window drift, and counts the whole fleet', async () => {
    const src = sources({ owned: [ownership('dev/dev-a', 'dev-pause', 'job')], holds: [hold] });
    const view = await new FleetData(src, new PolicyInForce(src)).view();
    expect(view.listing).toEqual({ at: LISTING.at, ageMs: 120_000, runId: 'run-list', job: 'dev-pause' });
    expect(view.counts).toEqual({
      workspaces: 5,
      byState: { Stopped: 2, Active: 2, Stopping: 1 },
      owned: 1,
      held: 1,
      heldIdle: 0,
      drifting: 1,
    });
    const all = view.workgroups.flatMap((wg) =>
      wg.workspaces.map((ws) => [`${wg.name}/${ws.name}`, ws] as const),
    );
    const ws = new Map(all);
    expect(ws.get('dev/a')?.owner).toEqual({
      kind: 'job',
      name: 'dev-pause',
      since: '2026-11-25T19:00:01.000Z',
      state: 'confirmed',
    });
    expect(ws.get('qa/q1')?.hold).toMatchObject({ state: 'stopped', reason: 'migration', by: 'ana' });
    // off hours: the window wants its workspaces stopped, and s2 is not
    expect(ws.get('staging/s2')?.window).toMatchObject({
      name: 'office-hours',
      desired: 'Stopped',
      drift: true,
    });
    expect(ws.get('staging/s1')?.window).toMatchObject({ drift: false });
    expect(ws.get('dev/keep')?.window).toBeNull();
  });

  it('shows a hold on a workspace no window covers, in the other state, as one nothing acts on, and does not count it among the held', async () => {
    const held = (pattern: string, createdAt: string): Hold => ({ ...hold, pattern, createdAt });
    const src = sources({
      holds: [held('dev/*', '2026-11-25T11:00:00.000Z'), held('staging/s2', '2026-11-25T12:00:00.000Z')],
    });
    const view = await new FleetData(src, new PolicyInForce(src)).view();
    const ws = new Map(
      view.workgroups.flatMap((wg) => wg.workspaces.map((w) => [`${wg.name}/${w.name}`, w])),
    );
    // dev/keep is Active and under no window: nothing will stop it for the hold
    expect(ws.get('dev/keep')?.hold).toMatchObject({
      state: 'stopped',
      inEffect: false,
      effect:
        'nothing acts on it here: no window covers this workspace, so nothing brings it to stopped (jobs only skip held workspaces)',
    });
    expect(ws.get('dev/keep')?.window).toBeNull();
    // dev/a is Stopped already: the hold keeps resume jobs away
    expect(ws.get('dev/a')?.hold).toMatchObject({
      inEffect: true,
      effect: 'no window covers it: resume jobs skip it',
    });
    // staging/s2 is under the window, which brings it to the held state
    expect(ws.get('staging/s2')?.hold).toMatchObject({
      inEffect: true,
      effect: 'window office-hours keeps it stopped',
    });
    expect(view.counts).toMatchObject({ held: 2, heldIdle: 1 });
  });

  it('does not claim what acts on a hold when the policy in force cannot be read', async () => {
    const src = sources({ holds: [{ ...hold, pattern: 'dev/keep' }] });
    src.readPolicy = () => 'unreadable';
    const view = await new FleetData(src, new PolicyInForce(src)).view();
    const keep = view.workgroups.flatMap((wg) => wg.workspaces).find((w) => w.name === 'keep');
    expect(keep?.hold).toMatchObject({
      inEffect: null,
      effect: 'unknown: the policy in force cannot be read here',
    });
    expect(view.counts).toMatchObject({ held: 1, heldIdle: 0 });
  });

  it('filters by workgroup and state while the counts stay those of the whole fleet', async () => {
    const src = sources();
    const data = new FleetData(src, new PolicyInForce(src));
    const stopped = await data.view({ state: 'Stopped' });
    expect(stopped.workgroups.map((wg) => [wg.name, wg.workspaces.map((w) => w.name)])).toEqual([
      ['dev', ['a']],
      ['staging', ['s1']],
    ]);
    expect(stopped.counts.workspaces).toBe(5);
    const staging = await data.view({ workgroup: 'staging' });
    expect(staging.workgroups.map((wg) => wg.name)).toEqual(['staging']);
    expect(staging.workgroupNames).toEqual(['dev', 'qa', 'staging']);
    expect(staging.states).toEqual(['Active', 'Stopped', 'Stopping']);
  });

  it('reads the stored listing again only when a newer one was stored', async () => {
    const src = sources();
    const data = new FleetData(src, new PolicyInForce(src));
    await data.view();
    await data.view();
    expect(src.listingReads).toBe(1);
  });

  it('says no run has listed the fleet yet instead of showing an empty fleet as if it were one', async () => {
    const src = sources({ listing: undefined });
    const view = await new FleetData(src, new PolicyInForce(src)).view();
    expect(view.listing).toBeNull();
    expect(view.workgroups).toEqual([]);
  });
});

describe('the console timeline of a workspace', () => {
  const hold: Hold = {
    pattern: 'dev/*',
    state: 'stopped',
    until: '2026-11-26T08:00:00.000Z',
    reason: 'budget freeze',
    by: 'ana',
    createdAt: '2026-11-25T10:00:00.000Z',
  };
  const pausedRun: WorkspaceRun = {
    at: '2026-11-25T19:00:05.000Z',
    runId: 'dev-pause@1',
    job: 'dev-pause',
    action: 'pause',
    outcome: 'succeeded',
    requestIds: ['req-pause'],
  };

  it('tells who paused, resumed and held it, when, under which run or hold, newest first, with the workspace as the fleet page shows it', async () => {
    const src = sources({
      owned: [ownership('dev/dev-a', 'dev-pause', 'job')],
      workspaceRuns: [pausedRun],
      intervals: [
        {
          key: 'dev/dev-a',
          workgroupId: 'dev',
          workspaceId: 'dev-a',
          owner: 'office-hours',
          ownerKind: 'window',
          from: '2026-11-24T18:00:00.000Z',
          to: '2026-11-25T07:00:00.000Z',
          endedBy: 'seen-active',
        },
      ],
      holdLog: [
        { at: '2026-11-25T10:00:00.000Z', event: 'held', hold },
        { at: '2026-11-25T09:00:00.000Z', event: 'held', hold: { ...hold, pattern: 'qa/*' } },
      ],
    });
    const view = await timelineView(src, new FleetData(src, new PolicyInForce(src)), 'dev', 'dev-a');
    expect(view?.now).toMatchObject({
      name: 'a',
      workgroupName: 'dev',
      state: 'Stopped',
      owner: { name: 'dev-pause' },
    });
    expect(view?.events.map((e) => [e.kind, e.at])).toEqual([
      ['run', '2026-11-25T19:00:05.000Z'],
      ['pause', '2026-11-25T19:00:01.000Z'],
      ['hold', '2026-11-25T10:00:00.000Z'],
      ['pause', '2026-11-25T07:00:00.000Z'],
    ]);
    expect(view?.events[1]).toMatchObject({ owner: 'dev-pause', runId: 'run-1', until: null });
    expect(view?.events[3]).toMatchObject({ owner: 'office-hours', endedBy: 'seen-active', runId: null });
    expect(view?.events[2]).toMatchObject({
      event: 'held',
      pattern: 'dev/*',
      by: 'ana',
      reason: 'budget freeze',
    });
    expect(view?.stranded).toBe(false);
    expect(view?.scope).toEqual({ runsKept: 1, closedPausesScanned: 1, holdEventsScanned: 2 });
  });

  it('calls a stopped workspace nobody owns, whose last pause the journal keeps, stranded', async () => {
    const src = sources({ journal: [ownership('dev/dev-a', 'office-hours', 'window')] });
    const view = await timelineView(src, new FleetData(src, new PolicyInForce(src)), 'dev', 'dev-a');
    expect(view).toMatchObject({ stranded: true, journal: { owner: 'office-hours', runId: 'run-1' } });
  });

  it('knows nothing of a workspace neither listed nor recorded, and still shows one recorded but no longer listed', async () => {
    const src = sources({ workspaceRuns: [{ ...pausedRun }] });
    const data = new FleetData(src, new PolicyInForce(src));
    expect(
      await timelineView(sources(), new FleetData(sources(), new PolicyInForce(sources())), 'dev', 'gone'),
    ).toBeUndefined();
    const gone = await timelineView(src, data, 'dev', 'gone');
    expect(gone).toMatchObject({ now: null, events: [{ kind: 'run', runId: 'dev-pause@1' }] });
  });
});

describe('the console savings view', () => {
  const interval = (key: string, from: string, to: string): PausedInterval =>
    ({
      key,
      workgroupId: key.split('/')[0],
      workspaceId: key.split('/')[1],
      workgroupName: key.split('/')[0],
      workspaceName: key.split('/')[1],
      owner: 'office-hours',
      ownerKind: 'window',
      from,
      to,
      pricePerHour: 2,
      currency: 'EUR',
    }) as PausedInterval;

  it('gives 30 UTC days whose hours add up to the total that `nightshift savings` reports for the same span', async () => {
    const intervals = [
      interval('dev/a', '2026-11-23T18:00:00.000Z', '2026-11-24T06:00:00.000Z'),
      interval('staging/s1', '2026-11-01T00:00:00.000Z', '2026-11-01T05:00:00.000Z'),
      interval('staging/s1', '2026-10-20T00:00:00.000Z', '2026-10-21T00:00:00.000Z'),
    ];
    const owned = [ownership('dev/dev-a', 'dev-pause', 'job')];
    const view = await savingsView(sources({ intervals, owned }));
    expect(view.days).toHaveLength(30);
    expect(view.days[0]?.date).toBe('2026-10-27');
    expect(view.days.at(-1)?.date).toBe('2026-11-25');
    const expected = savingsReport(intervals, owned, new Date(view.since), NOW);
    expect(view.total).toEqual({
      pausedHours: expected.totalPausedHours,
      estimatedCost: expected.totalEstimatedCost,
    });
    // 12 h across the night of the 23rd, 5 h on the 1st, ~2 h open today; the 20th is before the span
    expect(view.total.pausedHours).toBeCloseTo(12 + 5 + 1.9997, 2);
    const sum = view.days.reduce((s, d) => s + d.pausedHours, 0);
    expect(sum).toBeCloseTo(view.total.pausedHours, 1);
    expect(view.days.find((d) => d.date === '2026-11-23')?.byWorkgroup.dev).toEqual({
      pausedHours: 6,
      estimatedCost: 12,
    });
    expect(view.workgroups.map((w) => w.workgroup)).toEqual(['dev', 'staging']);
  });

  it('gives per-workgroup, per-owner and per-day rows that add up to the total to the cent, and breaks it down by window and job', async () => {
    // seven workgroups an hour each at 0.867 EUR: 6.069 in all, each row 0.87 when rounded alone (6.09)
    const intervals = Array.from({ length: 7 }, (_, i) => ({
      ...interval(`wg-${i}/ws`, '2026-11-24T01:00:00.000Z', '2026-11-24T02:00:00.000Z'),
      pricePerHour: 0.867,
      ...(i >= 4 ? { owner: 'dev-pause', ownerKind: 'job' as const } : {}),
    }));
    const view = await savingsView(sources({ intervals }));
    const cents = (values: (number | null)[]) =>
      Math.round(values.reduce<number>((s, v) => s + (v ?? 0), 0) * 100);
    expect(view.total.estimatedCost).toBe(6.07);
    expect(cents(view.workgroups.map((w) => w.estimatedCost))).toBe(607);
    expect(cents(view.days.map((d) => d.estimatedCost))).toBe(607);
    expect(view.owners).toEqual([
      { owner: 'office-hours', kind: 'window', pausedHours: 4, estimatedCost: 3.47 },
      { owner: 'dev-pause', kind: 'job', pausedHours: 3, estimatedCost: 2.6 },
    ]);
    const day = view.days.find((d) => d.date === '2026-11-24');
    expect(cents(Object.values(day?.byWorkgroup ?? {}).map((w) => w.estimatedCost))).toBe(
      Math.round((day?.estimatedCost ?? 0) * 100),
    );
  });
});
