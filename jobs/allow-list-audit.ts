import { z } from 'zod';
import type { AllowListEntry } from '../src/api/index.js';
import {
  type Action,
  type Finding,
  FindingSchema,
  type PlanContext,
  readOnlyVerbs,
  type SelectedWorkgroup,
  type StepResult,
  workgroupRef,
} from '../src/engine/index.js';
import {
  type Cidr,
  CidrSchema,
  contains,
  type IpFamily,
  isEnforced,
  overlaps,
  parseCidr,
  runnerBlocked,
  sameRange,
} from './support/allow-list.js';

const ipv4Prefix = z.number().int().min(0).max(32);
const ipv6Prefix = z.number().int().min(0).max(128);

/** The product's one severity vocabulary: audits, metrics labels and notifications all use it. */
const Severity = FindingSchema.shape.severity;
type Severity = z.output<typeof Severity>;
const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

/** Each rule of the audit (its findings' rule is `allow-list/<name>`) and its default severity. */
const DEFAULT_SEVERITY = {
  'forbidden-cidr': 'critical',
  'forbidden-overlap': 'critical',
  'too-wide': 'warning',
  'no-note': 'info',
  unexpected: 'warning',
  'missing-baseline': 'warning',
  disabled: 'critical',
  'runner-blocked': 'warning',
  'invalid-cidr': 'warning',
} as const satisfies Record<string, Severity>;
type AuditRule = keyof typeof DEFAULT_SEVERITY;

// one key per rule, so a misspelt rule is refused at its line with a did-you-mean
const severityShape = Object.fromEntries(
  Object.entries(DEFAULT_SEVERITY).map(([rule, severity]) => [
    rule,
    Severity.optional().meta({ description: `Severity of allow-list/${rule} findings.`, default: severity }),
  ]),
) as Record<AuditRule, z.ZodOptional<typeof Severity>>;

const params = z.strictObject({
  forbid: z.array(CidrSchema).optional().meta({
    description:
      'Ranges no entry may admit whole: an entry holding every address of one (the range itself or any wider one) is a finding. ["0.0.0.0/0", "::/0"] flags the entries open to the whole internet.',
  }),
  forbidOverlap: z.array(CidrSchema).optional().meta({
    description:
      'Ranges no entry may reach at all: an entry sharing any address with one (inside it or wider than it) is a finding. For private or internal ranges.',
  }),
  maxPrefix: z
    .union([
      ipv4Prefix,
      z.strictObject({
        ipv4: ipv4Prefix.optional().meta({ description: 'Shortest IPv4 prefix allowed (0-32).' }),
        ipv6: ipv6Prefix.optional().meta({ description: 'Shortest IPv6 prefix allowed (0-128).' }),
      }),
    ])
    .optional()
    .meta({
      description:
        'The widest range allowed, as a prefix length: an entry with a shorter prefix is a finding. A number applies to IPv4 only; { ipv4, ipv6 } sets each family. Unset: not checked.',
    }),
  requireNote: z
    .boolean()
    .default(true)
    .meta({ description: 'An entry without a note (why it is allowed) is a finding.', default: true }),
  baseline: z.array(CidrSchema).optional().meta({
    description:
      'The ranges the allow list should hold: each one missing, and each entry not in it, is a finding. Unset: not checked.',
  }),
  requireEnabled: z
    .boolean()
    .default(true)
    .meta({ description: 'An allow list whose enforcement is disabled is a finding.', default: true }),
  checkRunnerIp: z.boolean().default(true).meta({
    description: "Ask the API whether an enforced allow list admits this runner's own address.",
    default: true,
  }),
  severity: z.strictObject(severityShape).optional().meta({
    description:
      'The severity of each rule\'s findings (info, warning or critical), keyed by rule name without "allow-list/". A rule left out keeps its default.',
  }),
  failOn: Severity.optional().meta({
    description:
      'Fail the run (failure notification, exit 1) when a finding has this severity or a higher one. Unset: findings never fail the run.',
  }),
});
type Params = z.output<typeof params>;

function widestAllowed(maxPrefix: Params['maxPrefix'], family: IpFamily): number | undefined {
  if (maxPrefix === undefined) return undefined;
  if (typeof maxPrefix === 'number') return family === 'ipv4' ? maxPrefix : undefined;
  return maxPrefix[family];
}

function severityOf(rules: Params, rule: AuditRule): Severity {
  return rules.severity?.[rule] ?? DEFAULT_SEVERITY[rule];
}

/**
 * The findings of one workgroup's allow list against the job's rules (all but the runner check,
 * which needs the API). Pure: it sees only what it is given.
 */
export function auditAllowList(
  workgroupName: string,
  enforced: boolean,
  entries: readonly AllowListEntry[],
  rules: Params,
): Finding[] {
  const findings: Finding[] = [];
  const report = (rule: AuditRule, subject: string, message: string) =>
    findings.push({ rule: `allow-list/${rule}`, severity: severityOf(rules, rule), subject, message });
  const subject = (cidr: string) => `${workgroupName} ${cidr}`;
  const names = (ranges: readonly Cidr[]) =>
    `forbidden range${ranges.length === 1 ? '' : 's'} ${ranges.map((range) => range.text).join(', ')}`;
  if (rules.requireEnabled && !enforced) {
    report('disabled', workgroupName, 'allow-list enforcement is disabled: every address may connect');
  }
  const ranges: Cidr[] = [];
  for (const entry of entries) {
    let cidr: Cidr;
    try {
      cidr = parseCidr(entry.cidr);
    } catch (error) {
      report(
        'invalid-cidr',
        subject(entry.cidr),
        `${(error as RangeError).message}: the entry cannot be audited`,
      );
      continue;
    }
    ranges.push(cidr);
    const whole = (rules.forbid ?? []).filter((range) => contains(cidr, range));
    if (whole.length > 0) {
      report('forbidden-cidr', subject(entry.cidr), `admits every address of ${names(whole)}`);
    }
    const reached = (rules.forbidOverlap ?? []).filter((range) => overlaps(cidr, range));
    if (reached.length > 0) {
      report('forbidden-overlap', subject(entry.cidr), `admits addresses of ${names(reached)}`);
    }
    const widest = widestAllowed(rules.maxPrefix, cidr.family);
    if (widest !== undefined && cidr.prefix < widest) {
      report(
        'too-wide',
        subject(entry.cidr),
        `a /${cidr.prefix} range; the widest ${cidr.family === 'ipv4' ? 'IPv4' : 'IPv6'} range allowed is a /${widest}`,
      );
    }
    if (rules.requireNote && !entry.note?.trim()) {
      report('no-note', subject(entry.cidr), 'the entry has no note saying why it is allowed');
    }
    if (rules.baseline && !rules.baseline.some((expected) => sameRange(expected, cidr))) {
      report('unexpected', subject(entry.cidr), 'the entry is not in the baseline');
    }
  }
  for (const expected of rules.baseline ?? []) {
    if (!ranges.some((cidr) => sameRange(cidr, expected))) {
      report('missing-baseline', subject(expected.text), 'a baseline range is missing from the allow list');
    }
  }
  return findings;
}

/**
 * Why findings fail the run under `failOn`: how many have that severity or a higher one, by
 * severity. Undefined when none does, or without `failOn`.
 */
export function failOnReason(findings: readonly Finding[], failOn: Severity | undefined): string | undefined {
  if (failOn === undefined) return undefined;
  const reaching = findings.filter((finding) => RANK[finding.severity] >= RANK[failOn]);
  if (reaching.length === 0) return undefined;
  const bySeverity = (['critical', 'warning', 'info'] as const).flatMap((severity) => {
    const count = reaching.filter((finding) => finding.severity === severity).length;
    return count > 0 ? [`${count} ${severity}`] : [];
  });
  const one = reaching.length === 1;
  return `${reaching.length} finding${one ? '' : 's'} ${one ? 'reaches' : 'reach'} failOn: ${failOn} (${bySeverity.join(', ')})`;
}

/**
 * Audits every target workgroup; a workgroup's findings go with its step's result, so a failed
 * attempt reports none and a retry does not report them twice.
 */
async function auditWorkgroups(
  ctx: PlanContext,
  rules: Params,
  done: (detail: Record<string, unknown>) => StepResult,
): Promise<void> {
  await ctx.forEachTarget(ctx.workgroups, workgroupRef, async (wg: SelectedWorkgroup, step) => {
    const { result: entries } = await ctx.api.listAllowedIps(wg.workgroupId, { signal: step.signal });
    const enforced = isEnforced(wg.workgroup);
    const findings = auditAllowList(wg.workgroupName, enforced, entries, rules);
    // a disabled allow list blocks nobody: asking would only spend a call
    if (rules.checkRunnerIp && enforced) {
      const { result } = await ctx.api.checkCurrentIp(wg.workgroupId, { signal: step.signal });
      if (!result.isAllowed) {
        const blocked = runnerBlocked(wg.workgroupName, result.currentIp);
        findings.push({ ...blocked, severity: severityOf(rules, 'runner-blocked') });
      }
    }
    return { ...done({ entries: entries.length, findings: findings.length, enforced }), findings };
  });
}

/**
 * Audits, then fails the run when its findings reach `failOn`: failed rather than partial, since
 * partial means some targets were not done, and a violation must page whoever gets failures.
 * A dry run judges the same way, so a plan shows the run would fail. The verdict goes by every
 * finding of the run, those of workgroups an earlier delivery audited (before a worker died)
 * included.
 */
async function audit(ctx: PlanContext, rules: Params, done: (detail: Record<string, unknown>) => StepResult) {
  await auditWorkgroups(ctx, rules, done);
  const reason = failOnReason(ctx.findings(), rules.failOn);
  if (reason !== undefined) ctx.markRun('failed', reason);
}

/** Reports what is wrong with workgroups' IP allow lists; reads only, never changes one. */
export const allowListAudit: Action<typeof params> = {
  name: 'allow-list-audit',
  description:
    'Audit workgroup IP allow lists: forbidden or too-wide ranges, missing notes, baseline drift, enforcement; optionally fail the run on findings.',
  destructive: false,
  scope: 'workgroup',
  params,
  example: `version: 1
jobs:
  allow-list-audit:
    description: Nightly check of every workgroup's IP allow list
    schedule: "0 6 * * *"
    timezone: Europe/Berlin
    action: allow-list-audit
    target: { workgroups: ["*"] }
    with:
      forbid: ["0.0.0.0/0", "::/0"]
      forbidOverlap: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]
      maxPrefix: { ipv4: 24, ipv6: 48 }
      baseline: ["198.51.100.0/24", "203.0.113.10/32"]
      severity: { too-wide: critical }
      failOn: critical
`,

  ...readOnlyVerbs(audit, 'audited (read-only): findings as a run reports them'),
};
