import { describe, expect, it } from 'vitest';
import {
  type RunIdentity,
  skippedRunSummary,
  summarize,
  type TargetRecord,
} from '../../../src/engine/summary.js';

const run: RunIdentity = {
  runId: 'nightly@20261122T190000.000Z',
  job: 'nightly',
  action: 'pause-workspaces',
  trigger: 'schedule',
  dryRun: false,
  scheduledAt: '2026-11-22T19:00:00.000Z',
};
const target = (key: string, outcome: TargetRecord['outcome'], rule?: string): TargetRecord => ({
  key,
  outcome,
  attempts: 1,
  requestIds: [],
  ...(rule ? { findings: [{ rule, severity: 'warning', subject: key, message: rule }] } : {}),
});
const startedAt = new Date('2026-11-22T19:00:00.000Z');
const finishedAt = new Date('2026-11-22T19:00:02.500Z');

describe('summarize', () => {
  it('sorts targets by key and hoists their findings after the run-level ones, leaving none on the targets', () => {
    const summary = summarize(run, {
      startedAt,
      finishedAt,
      targets: [target('wg/b', 'succeeded', 'second'), target('wg/a', 'succeeded', 'first')],
      findings: [{ rule: 'run', severity: 'info', subject: 'fleet', message: 'run' }],
    });
    expect(summary.targets.map((t) => t.key)).toEqual(['wg/a', 'wg/b']);
    expect(summary.findings.map((f) => f.rule)).toEqual(['run', 'first', 'second']);
    expect(summary.targets.every((t) => !('findings' in t))).toBe(true);
  });

  it('counts the targets and derives the outcome from them unless one is given', () => {
    const targets = [target('a', 'succeeded'), target('b', 'failed')];
    const derived = summarize(run, { startedAt, finishedAt, targets });
    expect(derived.counts).toEqual({ total: 2, succeeded: 1, skipped: 0, failed: 1, planned: 0 });
    expect(derived.outcome).toBe('partial');
    expect(summarize(run, { startedAt, finishedAt, targets, outcome: 'failed' }).outcome).toBe('failed');
  });

  it('gives a duration only to a run that started, and never a negative one', () => {
    expect(summarize(run, { startedAt, finishedAt }).durationMs).toBe(2500);
    expect(summarize(run, { finishedAt })).not.toHaveProperty('durationMs');
    expect(summarize(run, { finishedAt })).not.toHaveProperty('startedAt');
    expect(summarize(run, { startedAt: finishedAt, finishedAt: startedAt }).durationMs).toBe(0);
  });

  it('names a takeover and the deliveries only when there are some', () => {
    expect(summarize(run, { finishedAt })).not.toHaveProperty('takenOverFrom');
    expect(summarize(run, { finishedAt })).not.toHaveProperty('deliveries');
    const taken = summarize({ ...run, deliveries: 2, takenOverFrom: 'host:1' }, { finishedAt });
    expect(taken).toMatchObject({ deliveries: 2, takenOverFrom: 'host:1' });
  });
});

describe('skippedRunSummary', () => {
  it('records a run that did nothing, with its reason and no targets', () => {
    const summary = skippedRunSummary(run, 'skipped: suspended', { finishedAt }, 'skipped');
    expect(summary).toMatchObject({
      outcome: 'skipped',
      reason: 'skipped: suspended',
      targets: [],
      findings: [],
    });
    expect(summary.counts.total).toBe(0);
    expect(skippedRunSummary(run, 'missed 3 tick(s)', { finishedAt }, 'missed').outcome).toBe('missed');
  });
});
