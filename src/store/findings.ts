import { z } from 'zod';
import { type Finding, FindingSchema, type RunSummary } from '../engine/index.js';
import { parseJson } from './json.js';
import { COMPARE_AND_SET_FIELD } from './lua.js';
import { RedisStore } from './redis-store.js';

/** A finding its job's latest succeeded run reports, and since when its runs have. */
export const OpenFindingSchema = FindingSchema.extend({
  job: z.string(),
  /** When a run of the job first reported it (and every succeeded run since has). */
  firstSeen: z.iso.datetime(),
  /** When the newest run that reported it finished. */
  lastSeen: z.iso.datetime(),
  /** The newest run that reported it. */
  runId: z.string(),
});
export type OpenFinding = z.infer<typeof OpenFindingSchema>;

/** A job's field of the findings hash: what its latest succeeded run reported. */
const JobFindingsSchema = z.object({
  /** When that run finished: a run that finished before it changes nothing. */
  at: z.iso.datetime(),
  runId: z.string(),
  findings: z.array(OpenFindingSchema),
});
type JobFindings = z.infer<typeof JobFindingsSchema>;

const SEVERITY_ORDER: Record<Finding['severity'], number> = { critical: 0, warning: 1, info: 2 };

/** Two runs of one job ending at the same instant are the only writers that can collide. */
const MAX_WRITE_ATTEMPTS = 5;

/** A finding is the same one from run to run when its rule and subject are. */
const identity = (finding: Finding) => JSON.stringify([finding.rule, finding.subject]);

/**
 * The findings each job's latest succeeded run reported, each with when it first appeared. Only
 * a real run that succeeded changes a job's set: a partial or failed run did not look at every
 * target, so a finding it does not report may still be there; a dry run records nothing. Such a
 * run replaces the set whole, so a finding it no longer reports is closed.
 */
export class FindingsLedger extends RedisStore {
  /** Takes in a finished run; anything but a real run that succeeded leaves the ledger as it was. */
  async record(summary: RunSummary): Promise<void> {
    if (summary.dryRun || summary.outcome !== 'succeeded' || !summary.finishedAt) return;
    const at = summary.finishedAt;
    for (let attempt = 1; ; attempt++) {
      const raw = await this.redis.hget(this.keys.findings, summary.job);
      const before = raw === null ? undefined : parseJobFindings(raw);
      // a run that finished later already set the job's findings
      if (before && before.at > at) return;
      const next: JobFindings = { at, runId: summary.runId, findings: reported(summary, at, before) };
      // written only if the field is still what was read: the set is replaced whole, never merged by two writers
      const written = await COMPARE_AND_SET_FIELD.run(
        this.redis,
        [this.keys.findings],
        [summary.job, raw === null ? '0' : '1', raw ?? '', JSON.stringify(next)],
      );
      if (written === 1) return;
      if (attempt >= MAX_WRITE_ATTEMPTS)
        throw new Error(`findings of ${summary.job}: changed by another run ${attempt} times in a row`);
    }
  }

  /** Every job's open findings: critical first, then warning, then info; oldest first within each. */
  async open(): Promise<OpenFinding[]> {
    const fields = await this.redis.hgetall(this.keys.findings);
    const findings = Object.values(fields).flatMap((raw) => parseJobFindings(raw)?.findings ?? []);
    return findings.sort(
      (a, b) =>
        SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
        a.firstSeen.localeCompare(b.firstSeen) ||
        a.job.localeCompare(b.job) ||
        a.rule.localeCompare(b.rule) ||
        a.subject.localeCompare(b.subject),
    );
  }
}

/** The run's findings, each keeping when it first appeared if the job's set held it already. */
function reported(summary: RunSummary, at: string, before: JobFindings | undefined): OpenFinding[] {
  const firstSeen = new Map(before?.findings.map((finding) => [identity(finding), finding.firstSeen]));
  return summary.findings.map((finding) => ({
    rule: finding.rule,
    severity: finding.severity,
    subject: finding.subject,
    message: finding.message,
    job: summary.job,
    firstSeen: firstSeen.get(identity(finding)) ?? at,
    lastSeen: at,
    runId: summary.runId,
  }));
}

/** A field this version cannot read counts as no findings: the next succeeded run rewrites it. */
function parseJobFindings(raw: string): JobFindings | undefined {
  const parsed = JobFindingsSchema.safeParse(parseJson(raw));
  return parsed.success ? parsed.data : undefined;
}
