import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FindingsLedger } from '../../../src/store/findings.js';
import { uniquePrefix, useTestRedisClient } from '../../helpers/redis.js';
import { finding, runSummary } from '../../helpers/summaries.js';

let redis: Redis;
useTestRedisClient((client) => {
  redis = client.redis;
});

const ledger = () => new FindingsLedger(redis, { prefix: uniquePrefix('findings') });
const open = async (findings: FindingsLedger) =>
  (await findings.open()).map(({ job, rule, subject, firstSeen, lastSeen, runId }) => ({
    job,
    rule,
    subject,
    firstSeen,
    lastSeen,
    runId,
  }));

describe('FindingsLedger', () => {
  it('keeps when a finding first appeared across the succeeded runs that report it, and the newest run that did', async () => {
    const findings = ledger();
    const first = runSummary({ findings: [finding('open-cidr', 'wg-1')] });
    const second = runSummary({ findings: [finding('open-cidr', 'wg-1'), finding('open-cidr', 'wg-2')] });
    await findings.record(first);
    await findings.record(second);
    expect(await open(findings)).toEqual([
      {
        job: 'audit',
        rule: 'open-cidr',
        subject: 'wg-1',
        firstSeen: first.finishedAt,
        lastSeen: second.finishedAt,
        runId: second.runId,
      },
      {
        job: 'audit',
        rule: 'open-cidr',
        subject: 'wg-2',
        firstSeen: second.finishedAt,
        lastSeen: second.finishedAt,
        runId: second.runId,
      },
    ]);
  });

  it('closes a finding a succeeded run no longer reports, and every finding when it reports none', async () => {
    const findings = ledger();
    await findings.record(
      runSummary({ findings: [finding('open-cidr', 'wg-1'), finding('open-cidr', 'wg-2')] }),
    );
    const fixedOne = runSummary({ findings: [finding('open-cidr', 'wg-2')] });
    await findings.record(fixedOne);
    expect((await findings.open()).map((open) => open.subject)).toEqual(['wg-2']);
    await findings.record(runSummary({ findings: [] }));
    expect(await findings.open()).toEqual([]);
  });

  it('opens a finding anew, with a new first appearance, when it comes back after being closed', async () => {
    const findings = ledger();
    await findings.record(runSummary({ findings: [finding('open-cidr', 'wg-1')] }));
    await findings.record(runSummary({ findings: [] }));
    const back = runSummary({ findings: [finding('open-cidr', 'wg-1')] });
    await findings.record(back);
    expect((await findings.open())[0]?.firstSeen).toBe(back.finishedAt);
  });

  it.each<[string, Partial<Parameters<typeof runSummary>[0]>]>([
    ['a partial run', { succeeded: 1, failed: 1 }],
    ['a failed run', { succeeded: 0, failed: 2 }],
    ['a dry run', { dryRun: true }],
    ['a skipped run', { outcome: 'skipped', succeeded: 0, reason: 'suspended' }],
  ])('leaves the open findings as they were after %s', async (_, options) => {
    const findings = ledger();
    const before = runSummary({ findings: [finding('open-cidr', 'wg-1')] });
    await findings.record(before);
    const kept = await findings.open();
    await findings.record(runSummary({ ...options, findings: [finding('open-cidr', 'wg-9')] }));
    expect(await findings.open()).toEqual(kept);
  });

  it('keeps the findings of the run that finished last when an earlier-finished run is recorded after it', async () => {
    const findings = ledger();
    const earlier = runSummary({ findings: [finding('open-cidr', 'wg-1')] });
    const later = runSummary({ findings: [finding('open-cidr', 'wg-2')] });
    await findings.record(later);
    await findings.record(earlier);
    expect((await findings.open()).map((open) => [open.subject, open.runId])).toEqual([
      ['wg-2', later.runId],
    ]);
  });

  it('keeps each job’s findings apart: one job’s run closes none of another’s', async () => {
    const findings = ledger();
    await findings.record(runSummary({ job: 'audit-ips', findings: [finding('open-cidr', 'wg-1')] }));
    await findings.record(runSummary({ job: 'audit-users', findings: [] }));
    expect((await findings.open()).map((open) => open.job)).toEqual(['audit-ips']);
  });

  it('lists critical findings first, then warnings, then info, oldest first within a severity', async () => {
    const findings = ledger();
    await findings.record(
      runSummary({ job: 'a', findings: [finding('r', 'old-info', 'info'), finding('r', 'old-warning')] }),
    );
    await findings.record(
      runSummary({
        job: 'b',
        findings: [
          finding('r', 'new-warning'),
          finding('r', 'new-critical', 'critical'),
          finding('r', 'new-info', 'info'),
        ],
      }),
    );
    expect((await findings.open()).map((open) => open.subject)).toEqual([
      'new-critical',
      'old-warning',
      'new-warning',
      'old-info',
      'new-info',
    ]);
  });

  it('answers every field of the finding with its job, first and last appearance and run', async () => {
    const findings = ledger();
    const run = runSummary({ findings: [finding('open-cidr', 'wg-1', 'critical')] });
    await findings.record(run);
    expect(await findings.open()).toEqual([
      {
        rule: 'open-cidr',
        severity: 'critical',
        subject: 'wg-1',
        message: 'open-cidr on wg-1',
        job: 'audit',
        firstSeen: run.finishedAt,
        lastSeen: run.finishedAt,
        runId: run.runId,
      },
    ]);
  });
});
