import type { RunSummary } from '../../../../src/engine/index.js';
import type {
  FindingsView,
  FleetView,
  FleetWorkspaceView,
  RunBrief,
  SavingsAmount,
  SavingsView,
  SchedulesView,
  WorkspaceTimelineView,
} from '../../../../src/ops/console/model.js';
import type { PageContext } from '../../../../src/ops/console/views/index.js';

/** Realistic view models for the console's pages, as the data layer builds them. */

export const NOW = '2026-11-25T20:00:00.000Z';
export const ctx: PageContext = { base: '', refreshMs: 5000, now: NOW };
export const HOSTILE = '<script>alert("x")</script>';

const counts = { total: 3, succeeded: 2, skipped: 0, failed: 1, planned: 0 };

export function runBrief(overrides: Partial<RunBrief> = {}): RunBrief {
  return {
    runId: 'nightly-pause:2026-11-25T19:00:00.000Z',
    job: 'nightly-pause',
    action: 'pause-workspaces',
    trigger: 'schedule',
    dryRun: false,
    outcome: 'partial',
    scheduledAt: '2026-11-25T19:00:00.000Z',
    startedAt: '2026-11-25T19:00:01.000Z',
    finishedAt: '2026-11-25T19:02:05.000Z',
    durationMs: 124_000,
    counts,
    findings: 0,
    ...overrides,
  };
}

export function schedulesView(overrides: Partial<SchedulesView> = {}): SchedulesView {
  return {
    generatedAt: NOW,
    policy: {
      sha: '3f9a1c0d5e7b2a4c6d8e0f1a2b3c4d5e6f708192',
      loadedAt: '2026-11-25T18:00:00.000Z',
      host: 'sched-1',
      rejected: null,
    },
    problem: null,
    entries: [
      {
        name: 'nightly-pause',
        kind: 'job',
        action: 'pause-workspaces',
        target: 'workgroups dev-* / workspaces * except dev-a/keep',
        schedule: 'at 20:00, Monday through Friday',
        timezone: 'Europe/Berlin',
        dryRun: false,
        next: { at: '2026-11-26T19:00:00.000Z', local: '2026-11-26 20:00', timezone: 'Europe/Berlin' },
        suspended: null,
        skip: null,
        lastRun: runBrief(),
      },
      {
        name: 'office-hours',
        kind: 'window',
        action: 'window',
        target: 'workgroups team-*',
        schedule: 'uptime Mon–Fri 08:00–19:00, reconcile every 5 min',
        timezone: 'Europe/Berlin',
        dryRun: false,
        next: {
          at: '2026-11-26T07:00:00.000Z',
          local: '2026-11-26 08:00',
          timezone: 'Europe/Berlin',
          edge: 'uptime starts',
        },
        suspended: null,
        skip: { calendars: ['holidays'], today: null, upcoming: ['2026-12-24', '2026-12-25'] },
        lastRun: null,
      },
      {
        name: 'audit-users',
        kind: 'job',
        action: 'audit-org-users',
        target: 'the organisation',
        schedule: 'every day at 06:00',
        timezone: 'UTC',
        dryRun: true,
        next: null,
        suspended: { by: 'command', detail: 'alice at 2026-11-25T10:00:00Z: quarter close' },
        skip: null,
        lastRun: runBrief({ runId: 'audit-users:1', job: 'audit-users', outcome: 'succeeded', findings: 2 }),
      },
    ],
    recent: [
      { kind: 'run', run: runBrief() },
      {
        kind: 'run',
        run: runBrief({
          runId: 'audit-users:1',
          job: 'audit-users',
          outcome: 'succeeded',
          takenOverFrom: 'worker-7',
        }),
      },
    ],
    ...overrides,
  };
}

export function runDetail(overrides: Partial<RunSummary> = {}): RunSummary {
  return {
    runId: 'nightly-pause:2026-11-25T19:00:00.000Z',
    job: 'nightly-pause',
    action: 'pause-workspaces',
    trigger: 'schedule',
    dryRun: false,
    scheduledAt: '2026-11-25T19:00:00.000Z',
    startedAt: '2026-11-25T19:00:01.000Z',
    finishedAt: '2026-11-25T19:02:05.000Z',
    durationMs: 124_000,
    outcome: 'partial',
    reason: 'one workspace failed',
    counts: { total: 2, succeeded: 1, skipped: 0, failed: 1, planned: 0 },
    targets: [
      {
        key: 'wg1/ws1',
        workgroupId: 'wg1',
        workgroupName: 'dev-berlin',
        workspaceId: 'ws1',
        workspaceName: 'dev-a',
        outcome: 'succeeded',
        attempts: 1,
        throttled: 2,
        requestIds: ['req-a1', 'req-a2', 'req-a3'],
        durationMs: 40_000,
      },
      {
        key: 'wg1/ws2',
        workgroupId: 'wg1',
        workgroupName: 'dev-berlin',
        workspaceId: 'ws2',
        workspaceName: HOSTILE,
        outcome: 'failed',
        attempts: 3,
        error: {
          message: 'internal',
          type: 'Internal-Error',
          status: 500,
          requestId: 'req-b3',
          retryable: true,
        },
        requestIds: ['req-b1', 'req-b2', 'req-b3'],
        durationMs: 60_000,
      },
    ],
    findings: [{ rule: 'allow-list', severity: 'warning', subject: 'dev-a', message: 'not on the list' }],
    evidence: { restoredFrom: 'snap-1', checks: { rows: 12, ok: true } },
    requestIds: ['req-list-1', 'req-list-2'],
    deliveries: 2,
    takenOverFrom: 'worker-host-1:4242',
    ...overrides,
  };
}

/** A fleet of `workgroups` × `perWorkgroup` workspaces, every tenth held, every seventh drifting. */
export function fleetView(
  workgroups: number,
  perWorkgroup: number,
  overrides: Partial<FleetView> = {},
): FleetView {
  const states = ['Active', 'Stopped', 'Stopped', 'Stopping', 'Resuming', 'Failed'];
  const byState: Record<string, number> = {};
  let n = 0;
  const groups = Array.from({ length: workgroups }, (_, g) => ({
    id: `wg${g}`,
    name: `team-${String(g).padStart(3, '0')}`,
    workspaces: Array.from({ length: perWorkgroup }, (_, w): FleetWorkspaceView => {
      const state = states[n++ % states.length] ?? 'Active';
      byState[state] = (byState[state] ?? 0) + 1;
      return {
        id: `ws${g}-${w}`,
        name: `team-${String(g).padStart(3, '0')}-ws-${String(w).padStart(4, '0')}`,
        state,
        owner:
          state === 'Stopped'
            ? { kind: 'window', name: 'office-hours', since: '2026-11-25T18:00:00.000Z', state: 'confirmed' }
            : null,
        hold:
          w % 10 === 0
            ? {
                pattern: `team-*/ws-${w}`,
                state: 'Active',
                until: '2026-11-27T00:00:00.000Z',
                by: 'bob',
                reason: 'demo on Friday',
                inEffect: true,
                effect: 'window office-hours keeps it active',
              }
            : null,
        window: {
          name: 'office-hours',
          desired: 'Stopped',
          drift: w % 7 === 0,
          why: w % 7 === 0 ? 'Active outside uptime' : 'as desired',
        },
      };
    }),
  }));
  return {
    generatedAt: NOW,
    listing: {
      at: '2026-11-25T19:57:00.000Z',
      ageMs: 180_000,
      runId: 'office-hours:reconcile:1',
      job: 'office-hours',
    },
    filters: { workgroup: null, state: null },
    counts: { workspaces: n, byState, owned: byState.Stopped ?? 0, held: 0, heldIdle: 0, drifting: 0 },
    workgroupNames: groups.map((g) => g.name),
    states: Object.keys(byState).sort(),
    workgroups: groups,
    ...overrides,
  };
}

/** 30 days ending today, two workgroups. */
export function savingsView(overrides: Partial<SavingsView> = {}): SavingsView {
  const days = Array.from({ length: 30 }, (_, i) => {
    const date = new Date(Date.UTC(2026, 9, 27 + i)).toISOString().slice(0, 10);
    const dev = i % 7 >= 5 ? 0 : 10 + (i % 3);
    const ops = i % 2 === 0 ? 2.5 : 0;
    const byWorkgroup: Record<string, SavingsAmount> = {
      'dev-berlin': { pausedHours: dev, estimatedCost: dev * 0.5 },
      ops: { pausedHours: ops, estimatedCost: ops * 0.5 },
    };
    return { date, pausedHours: dev + ops, estimatedCost: (dev + ops) * 0.5, byWorkgroup };
  });
  const sum = (name: string) => days.reduce((s, d) => s + (d.byWorkgroup[name]?.pausedHours ?? 0), 0);
  const total = sum('dev-berlin') + sum('ops');
  return {
    generatedAt: NOW,
    since: '2026-10-27T00:00:00.000Z',
    until: NOW,
    currency: 'EUR',
    total: { pausedHours: total, estimatedCost: total * 0.5 },
    days,
    workgroups: [
      { workgroup: 'dev-berlin', pausedHours: sum('dev-berlin'), estimatedCost: sum('dev-berlin') * 0.5 },
      { workgroup: 'ops', pausedHours: sum('ops'), estimatedCost: sum('ops') * 0.5 },
    ],
    owners: [
      {
        owner: 'office-hours',
        kind: 'window',
        pausedHours: sum('dev-berlin'),
        estimatedCost: sum('dev-berlin') * 0.5,
      },
      { owner: 'ops-nightly', kind: 'job', pausedHours: sum('ops'), estimatedCost: sum('ops') * 0.5 },
    ],
    ...overrides,
  };
}

export function findingsView(overrides: Partial<FindingsView> = {}): FindingsView {
  return {
    generatedAt: NOW,
    findings: [
      {
        job: 'audit-users',
        rule: 'no-stale-admins',
        severity: 'critical',
        subject: 'carol@example.com',
        message: 'admin without login for 120 days',
        firstSeen: '2026-11-20T06:00:00.000Z',
        lastSeen: '2026-11-25T06:00:00.000Z',
        runId: 'audit-users:2026-11-25T06:00:00.000Z',
      },
      {
        job: 'audit-allow-list',
        rule: 'allow-list',
        severity: 'warning',
        subject: HOSTILE,
        message: 'workspace not on the allow-list',
        firstSeen: '2026-11-25T12:00:00.000Z',
        lastSeen: '2026-11-25T18:00:00.000Z',
        runId: 'audit-allow-list:1',
      },
    ],
    ...overrides,
  };
}

const VOID = new Set(['meta', 'link', 'br', 'input', 'img', 'hr', 'line', 'rect']);

/**
 * The tags of `html` that do not nest: a start tag closed by another's end, or left open. An
 * empty list is the test's stand-in for a validator (none is installed).
 */
export function unbalancedTags(html: string): string[] {
  const stack: string[] = [];
  const problems: string[] = [];
  for (const match of html.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9-]*)\b[^>]*?(\/?)>/g)) {
    const [, closing, rawName, selfClosing] = match;
    const name = (rawName ?? '').toLowerCase();
    if (selfClosing || (!closing && VOID.has(name))) continue;
    if (!closing) stack.push(name);
    else if (stack.at(-1) === name) stack.pop();
    else problems.push(`</${name}> closes <${stack.at(-1) ?? 'nothing'}>`);
  }
  return [...problems, ...stack.map((name) => `<${name}> left open`)];
}

/** A workspace paused by a window tonight, resumed by hand this morning, held by ana. */
export function timelineView(overrides: Partial<WorkspaceTimelineView> = {}): WorkspaceTimelineView {
  const workspace = fleetView(1, 2).workgroups[0]?.workspaces[1] as FleetWorkspaceView;
  return {
    generatedAt: NOW,
    workgroupId: 'wg0',
    workspaceId: 'ws0-1',
    now: { ...workspace, workgroupName: 'team-000' },
    listing: {
      at: '2026-11-25T19:57:00.000Z',
      ageMs: 180_000,
      runId: 'office-hours:reconcile:1',
      job: 'office-hours',
    },
    journal: {
      owner: 'office-hours',
      ownerKind: 'window',
      runId: 'office-hours@19',
      at: '2026-11-25T18:00:00.000Z',
    },
    stranded: false,
    events: [
      {
        kind: 'run',
        at: '2026-11-25T18:00:05.000Z',
        job: 'office-hours',
        action: 'reconcile-window',
        runId: 'office-hours@19',
        outcome: 'succeeded',
        reason: 'outside uptime: pausing',
        error: null,
        requestIds: ['req-7f3a'],
      },
      {
        kind: 'pause',
        at: '2026-11-25T18:00:01.000Z',
        owner: 'office-hours',
        ownerKind: 'window',
        runId: 'office-hours@19',
        state: 'confirmed',
        until: null,
        endedBy: null,
        requestId: 'req-7f3a',
      },
      {
        kind: 'hold',
        at: '2026-11-25T10:00:00.000Z',
        event: 'held',
        pattern: 'team-*/ws-1',
        state: 'stopped',
        until: '2026-11-27T00:00:00.000Z',
        by: 'ana',
        reason: HOSTILE,
      },
      {
        kind: 'pause',
        at: '2026-11-25T06:12:00.000Z',
        owner: 'office-hours',
        ownerKind: 'window',
        runId: null,
        state: 'confirmed',
        until: '2026-11-25T06:12:00.000Z',
        endedBy: 'seen-active',
        requestId: null,
      },
    ],
    scope: { runsKept: 1, closedPausesScanned: 2000, holdEventsScanned: 3 },
    ...overrides,
  };
}
