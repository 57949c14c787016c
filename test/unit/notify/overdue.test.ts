import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type OverdueNotice,
  overdueJsonPayload,
  overdueOf,
  overdueSlackPayload,
} from '../../../src/notify/index.js';
import { createActionCatalog, type PolicyJob, parsePolicy } from '../../../src/policy/index.js';
import type { LastRun } from '../../../src/store/index.js';

const registry = createActionCatalog([
  {
    name: 'audit',
    description: 'Test only.',
    destructive: false,
    scope: 'none',
    params: z.strictObject({}),
  },
]);

/** Jobs of a policy: `daily` at 06:00 UTC, `weekdays` at 20:00 UTC Mon-Fri, `within` expected within 26h. */
const policy = parsePolicy(
  `version: 1
jobs:
  daily: { schedule: "0 6 * * *", action: audit }
  weekdays: { schedule: "0 20 * * 1-5", action: audit }
  within: { schedule: "0 6 * * *", action: audit, expectSuccessWithin: 26h }
  resting: { schedule: "0 6 * * *", action: audit, suspend: true }
  rehearsal: { schedule: "0 6 * * *", action: audit, dryRun: true }
windows:
  office: { target: { workgroups: ["*"] }, uptime: "Mon-Fri 08:00-18:00" }
`,
  'policy.yaml',
  { registry, env: {} },
);
const job = (name: string): PolicyJob => {
  const found = policy.jobs.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no job ${name}`);
  return found;
};
const at = (iso: string) => Date.parse(iso);
const run = (name: string, outcome: LastRun['outcome'], iso: string): LastRun => ({
  job: name,
  outcome,
  at: at(iso),
});
/** The default timeout (30m) a run may take after its firing. */
const TIMEOUT_MS = 30 * 60_000;

describe('overdue: when a job has not succeeded on time', () => {
  it('is overdue once the second firing after its last success (and its timeout) has passed', () => {
    const runs = [run('daily', 'succeeded', '2026-11-23T06:05:00Z')];
    expect(overdueOf(job('daily'), runs, at('2026-11-24T07:00:00Z'))).toBeUndefined();
    expect(overdueOf(job('daily'), runs, at('2026-11-25T06:00:00Z') + TIMEOUT_MS)).toBeUndefined();
    expect(overdueOf(job('daily'), runs, at('2026-11-25T06:00:00Z') + TIMEOUT_MS + 1)).toEqual({
      lastSuccessAt: '2026-11-23T06:05:00.000Z',
      reason: 'late',
      dueBy: '2026-11-25T06:30:00.000Z',
    });
  });

  it('counts firings, not hours: a weekday job that succeeded on Friday is not overdue over the weekend', () => {
    const runs = [run('weekdays', 'succeeded', '2026-11-20T20:05:00Z')];
    expect(overdueOf(job('weekdays'), runs, at('2026-11-23T21:00:00Z'))).toBeUndefined();
    expect(overdueOf(job('weekdays'), runs, at('2026-11-24T21:00:00Z'))).toMatchObject({
      reason: 'late',
      dueBy: '2026-11-24T20:30:00.000Z',
    });
  });

  it('takes expectSuccessWithin over the firings when the job sets it', () => {
    const runs = [run('within', 'succeeded', '2026-11-23T06:05:00Z')];
    expect(overdueOf(job('within'), runs, at('2026-11-24T08:05:00Z'))).toBeUndefined();
    expect(overdueOf(job('within'), runs, at('2026-11-24T08:06:00Z'))).toMatchObject({
      reason: 'late',
      dueBy: '2026-11-24T08:05:00.000Z',
    });
  });

  it('is overdue when a firing after the last success was missed and no success came within the job’s timeout', () => {
    const runs = [
      run('daily', 'succeeded', '2026-11-23T06:05:00Z'),
      run('daily', 'missed', '2026-11-24T09:00:00Z'),
    ];
    expect(overdueOf(job('daily'), runs, at('2026-11-24T09:30:00Z'))).toBeUndefined();
    expect(overdueOf(job('daily'), runs, at('2026-11-24T09:31:00Z'))).toEqual({
      lastSuccessAt: '2026-11-23T06:05:00.000Z',
      reason: 'missed',
      dueBy: '2026-11-24T09:30:00.000Z',
    });
    // the history keeps the newest run of each outcome: the catch-up's success replaces the old one
    const caughtUp = [
      run('daily', 'succeeded', '2026-11-24T09:02:00Z'),
      run('daily', 'missed', '2026-11-24T09:00:00Z'),
    ];
    expect(overdueOf(job('daily'), caughtUp, at('2026-11-24T10:00:00Z'))).toBeUndefined();
  });

  it('measures a job that never succeeded from its oldest run on record; one with no run, a suspended or dry-run job and a window never are', () => {
    const failing = [
      run('daily', 'failed', '2026-11-24T06:01:00Z'),
      run('daily', 'partial', '2026-11-22T06:01:00Z'),
    ];
    expect(overdueOf(job('daily'), failing, at('2026-11-25T07:00:00Z'))).toMatchObject({
      lastSuccessAt: null,
      reason: 'late',
      dueBy: '2026-11-24T06:30:00.000Z',
    });
    const late = at('2026-12-24T00:00:00Z');
    expect(overdueOf(job('daily'), [], late)).toBeUndefined();
    expect(
      overdueOf(job('resting'), [run('resting', 'failed', '2026-11-01T06:00:00Z')], late),
    ).toBeUndefined();
    expect(overdueOf(job('office'), [run('office', 'failed', '2026-11-01T06:00:00Z')], late)).toBeUndefined();
  });
});

describe('overdue notices', () => {
  const notice: OverdueNotice = {
    event: 'overdue',
    job: 'daily',
    episode: { lastSuccessAt: '2026-11-23T06:05:00.000Z', reason: 'late', dueBy: '2026-11-25T06:30:00.000Z' },
    expectSuccessWithin: null,
    succeededAt: null,
    at: '2026-11-25T06:31:00.000Z',
  };

  it('json carries the episode and the job’s runs in the console', () => {
    expect(overdueJsonPayload(notice, 'https://ops.example.com/runs?job=daily')).toEqual({
      kind: 'nightshift.overdue',
      version: 1,
      event: 'overdue',
      job: 'daily',
      reason: 'late',
      lastSuccessAt: '2026-11-23T06:05:00.000Z',
      dueBy: '2026-11-25T06:30:00.000Z',
      expectSuccessWithinMs: null,
      succeededAt: null,
      at: '2026-11-25T06:31:00.000Z',
      link: 'https://ops.example.com/runs?job=daily',
    });
  });

  it('slack says what is late since when, and when it cleared', () => {
    expect(overdueSlackPayload(notice, undefined).text).toBe(
      'nightshift: daily is overdue: has not succeeded on time: due by 2026-11-25T06:30:00.000Z; last success 2026-11-23T06:05:00.000Z',
    );
    const cleared = { ...notice, event: 'cleared' as const, succeededAt: '2026-11-25T07:00:00.000Z' };
    expect(overdueSlackPayload(cleared, undefined).text).toBe(
      'nightshift: daily is no longer overdue: it succeeded at 2026-11-25T07:00:00.000Z',
    );
  });
});
