import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import type { Workgroup } from '../../../src/api/index.js';
import type { Hold, Ownership, WindowState, WorkspaceDecision } from '../../../src/engine/index.js';
import { decideWindow, selectTargets } from '../../../src/engine/index.js';
import { type PolicyJob, parsePolicy } from '../../../src/policy/index.js';

/** Office hours in Berlin; Friday 2026-11-20 is a working day, 2026-12-24 a holiday. */
function policy(extra = '', resume = 'owned') {
  return parsePolicy(
    `version: 1
calendars:
  holidays: ["2026-12-24"]
windows:
  office:
    target: { workgroups: ["dev-*"] }
    uptime: "Mon-Fri 07:30-19:30"
    timezone: Europe/Berlin
    skip: [holidays]
    resume: ${resume}
${extra}`,
    'w.yaml',
    { registry: actionRegistry, env: {} },
  );
}

const window = (text = '', resume = 'owned'): PolicyJob => {
  const job = policy(text, resume).jobs.find((candidate) => candidate.name === 'office');
  if (!job?.window) throw new Error('no window');
  return job;
};

const fleet: Workgroup[] = [
  {
    workgroup_id: 'wg1',
    name: 'dev-alpha',
    workspaces: [
      { workspace_id: 'a', name: 'a', status: 'Active', created_at: '2026-01-01T00:00:00Z' },
      { workspace_id: 'b', name: 'b', status: 'Stopped', created_at: '2026-01-01T00:00:00Z' },
      { workspace_id: 'c', name: 'c', status: 'Stopping', created_at: '2026-01-01T00:00:00Z' },
    ],
  },
];

function withStatus(statuses: Record<string, string>): Workgroup[] {
  return fleet.map((wg) => ({
    ...wg,
    workspaces: wg.workspaces?.map((ws) => ({
      ...ws,
      status: statuses[ws.workspace_id as string] ?? ws.status,
    })),
  }));
}

function owned(key: string, owner = 'office'): Ownership {
  const [workgroupId = '', workspaceId = ''] = key.split('/');
  return {
    key,
    workgroupId,
    workspaceId,
    owner,
    ownerKind: owner === 'office' ? 'window' : 'job',
    runId: 'r',
    state: 'confirmed',
    intendedAt: '2026-11-19T18:30:00Z',
    pausedAt: '2026-11-19T18:30:01Z',
  };
}

interface Case {
  job?: PolicyJob;
  now: string;
  workgroups?: Workgroup[];
  owned?: Ownership[];
  holds?: Hold[];
  state?: WindowState;
}

function decide(input: Case) {
  const job = input.job ?? window();
  const workgroups = input.workgroups ?? fleet;
  const decision = decideWindow({
    name: 'office',
    window: job.window as NonNullable<PolicyJob['window']>,
    now: new Date(input.now),
    workspaces: selectTargets(workgroups, job.target?.selector as never),
    workgroups,
    owned: new Map((input.owned ?? []).map((record) => [record.key, record])),
    holds: input.holds,
    state: input.state,
  });
  const by = Object.fromEntries(decision.decisions.map((d) => [d.ws.workspaceId, d])) as Record<
    string,
    WorkspaceDecision
  >;
  return { decision, by };
}

// Friday 2026-11-20, Berlin is UTC+1: 19:30 local = 18:30Z, 07:30 local = 06:30Z
const EVENING = '2026-11-20T18:45:00Z';
const DOWN_PERIOD = 'down@2026-11-20T18:30:00.000Z';

describe('a window outside uptime', () => {
  it('at the first reconciliation of the off period pauses what runs and wants everything Stopped', () => {
    const { decision, by } = decide({ now: EVENING });
    expect(decision).toMatchObject({ up: false, period: DOWN_PERIOD, newPeriod: true });
    expect(by.a).toMatchObject({
      desired: 'Stopped',
      act: 'pause',
      drift: true,
      why: 'outside uptime: pausing',
    });
    expect(by.b).toMatchObject({ desired: 'Stopped', act: undefined, drift: false });
    expect(by.c).toMatchObject({ desired: 'Stopped', act: undefined, drift: false });
  });

  it('later in the same period leaves a workspace started by hand running and reports it as drift (enforce: false)', () => {
    const { decision, by } = decide({
      now: '2026-11-20T22:00:00Z',
      state: { period: DOWN_PERIOD, pending: [] },
    });
    expect(decision.newPeriod).toBe(false);
    expect(by.a).toMatchObject({
      desired: 'Stopped',
      act: undefined,
      drift: true,
      why: 'Active outside uptime (started by hand?); enforce: false leaves it running',
    });
  });

  it('with enforce: true pauses it again', () => {
    const { by } = decide({
      job: window('    enforce: true'),
      now: '2026-11-20T22:00:00Z',
      state: { period: DOWN_PERIOD, pending: [] },
    });
    expect(by.a).toMatchObject({ act: 'pause', why: 'Active outside uptime: pausing again (enforce)' });
  });

  it('retries what the period’s edge could not pause (pending), without enforce', () => {
    const { by } = decide({
      now: '2026-11-20T22:00:00Z',
      state: { period: DOWN_PERIOD, pending: ['wg1/a'] },
    });
    expect(by.a).toMatchObject({ act: 'pause' });
  });

  it('keeps a holiday entirely outside uptime, in the middle of a working day', () => {
    const { decision } = decide({ now: '2026-12-24T10:00:00Z' });
    expect(decision.up).toBe(false);
    expect(decision.period).toBe('down@2026-12-23T18:30:00.000Z');
  });
});

describe('a window in uptime', () => {
  const MORNING = '2026-11-23T07:00:00Z'; // Monday 08:00 Berlin

  it('resumes only what it paused itself (resume: owned): not a workspace someone else stopped, nor one a job paused', () => {
    const { decision, by } = decide({
      now: MORNING,
      workgroups: withStatus({ a: 'Stopped', c: 'Stopped' }),
      owned: [owned('wg1/a'), owned('wg1/c', 'evening-pause')],
    });
    expect(decision).toMatchObject({ up: true, period: 'up@2026-11-23T06:30:00.000Z' });
    expect(by.a).toMatchObject({
      desired: 'Active',
      act: 'resume',
      why: 'in uptime: resuming what the window paused',
    });
    expect(by.b).toMatchObject({ desired: undefined, act: undefined, drift: false });
    expect(by.c).toMatchObject({ desired: undefined, act: undefined, drift: false });
  });

  it('with resume: all resumes every Stopped workspace at the period’s start, and later reports one stopped by hand', () => {
    const job = window('', 'all');
    const first = decide({ job, now: MORNING });
    expect(first.by.b).toMatchObject({ desired: 'Active', act: 'resume' });
    const later = decide({
      job,
      now: '2026-11-23T10:00:00Z',
      state: { period: first.decision.period, pending: [] },
    });
    expect(later.by.b).toMatchObject({ act: undefined, drift: true });
  });

  it('with resume: none wants nothing in uptime', () => {
    const { by } = decide({ job: window('', 'none'), now: MORNING, owned: [owned('wg1/b')] });
    expect(by.b).toMatchObject({ desired: undefined, act: undefined, drift: false });
  });
});

describe('holds, grace and other windows', () => {
  const hold = (state: 'active' | 'stopped'): Hold => ({
    pattern: 'dev-alpha/*',
    state,
    until: '2026-11-21T00:00:00Z',
    reason: 'customer demo',
    by: 'ana',
    createdAt: '2026-11-20T12:00:00Z',
  });

  it('a hold overrides the window: held active stays running in off hours, held stopped is paused in uptime', () => {
    const evening = decide({ now: EVENING, holds: [hold('active')] });
    expect(evening.by.a).toMatchObject({ desired: 'Active', act: undefined, drift: false });
    expect(evening.by.b).toMatchObject({ desired: 'Active', act: 'resume', drift: true });
    expect(evening.by.b?.why).toBe('held active until 2026-11-21T00:00:00Z by ana (customer demo)');
    const day = decide({ now: '2026-11-20T12:30:00Z', holds: [hold('stopped')] });
    expect(day.by.a).toMatchObject({ desired: 'Stopped', act: 'pause' });
  });

  it('a hold that has run out no longer counts', () => {
    const { by } = decide({ now: '2026-11-21T00:00:00Z', holds: [hold('active')] });
    expect(by.a?.hold).toBeUndefined();
  });

  it('leaves alone a workspace created less than grace ago', () => {
    const job = window('    grace: 2h');
    const young = fleet.map((wg) => ({
      ...wg,
      workspaces: wg.workspaces?.map((ws) => ({ ...ws, created_at: '2026-11-20T18:00:00Z' })),
    }));
    const { by } = decide({ job, now: EVENING, workgroups: young });
    expect(by.a).toMatchObject({
      desired: undefined,
      act: undefined,
      why: 'created less than 7200s ago (grace)',
    });
  });

  it('refuses to act on a workspace another window also covers, and counts it as drift', () => {
    // one target names the workgroup, the other its id: no glob can tell, the listing does
    const text = `version: 1
windows:
  office:
    target: { workgroups: ["dev-*"] }
    uptime: "Mon-Fri 07:30-19:30"
  late:
    target: { workgroups: ["wg1"] }
    uptime: "Mon-Fri 10:00-22:00"
`;
    const job = parsePolicy(text, 'w.yaml', { registry: actionRegistry, env: {} }).jobs[0] as PolicyJob;
    const { by } = decide({ job, now: EVENING });
    expect(by.a).toMatchObject({ conflict: 'late', act: undefined, desired: undefined, drift: true });
    expect(by.a?.why).toBe(
      'also under window late: a workspace can be under one window only; left alone until the policy says which',
    );
  });
});
