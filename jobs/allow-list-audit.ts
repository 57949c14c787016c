import { z } from 'zod';
import type { AllowListEntry } from '../src/api/index.js';
import type { SelectedWorkgroup } from '../src/policy/index.js';
import {
  type Action,
  type ActionContext,
  type Finding,
  type StepResult,
  workgroupRef,
} from '../src/runs/index.js';
import {
  type Cidr,
  CidrSchema,
  type IpFamily,
  isEnforced,
  overlaps,
  parseCidr,
  runnerBlocked,
  sameRange,
} from './allow-list.js';

const ipv4Prefix = z.number().int().min(0).max(32);
const ipv6Prefix = z.number().int().min(0).max(128);

const params = z.strictObject({
  forbid: z.array(CidrSchema).optional().meta({
    description:
      'Ranges no entry may reach: an entry sharing any address with one (inside it or wider than it) is a finding.',
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
});
type Params = z.output<typeof params>;

function widestAllowed(maxPrefix: Params['maxPrefix'], family: IpFamily): number | undefined {
  if (maxPrefix === undefined) return undefined;
  if (typeof maxPrefix === 'number') return family === 'ipv4' ? maxPrefix : undefined;
  return maxPrefix[family];
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
  const subject = (cidr: string) => `${workgroupName} ${cidr}`;
  if (rules.requireEnabled && !enforced) {
    findings.push({
      rule: 'allow-list/disabled',
      severity: 'critical',
      subject: workgroupName,
      message: 'allow-list enforcement is disabled: every address may connect',
    });
  }
  const ranges: Cidr[] = [];
  for (const entry of entries) {
    let cidr: Cidr;
    try {
      cidr = parseCidr(entry.cidr);
    } catch (error) {
      findings.push({
        rule: 'allow-list/invalid-cidr',
        severity: 'warning',
        subject: subject(entry.cidr),
        message: `${(error as RangeError).message}: the entry cannot be audited`,
      });
      continue;
    }
    ranges.push(cidr);
    const forbidden = (rules.forbid ?? []).filter((range) => overlaps(cidr, range));
    if (forbidden.length > 0) {
      findings.push({
        rule: 'allow-list/forbidden-cidr',
        severity: 'critical',
        subject: subject(entry.cidr),
        message: `admits addresses of forbidden range ${forbidden.map((range) => range.text).join(', ')}`,
      });
    }
    const widest = widestAllowed(rules.maxPrefix, cidr.family);
    if (widest !== undefined && cidr.prefix < widest) {
      findings.push({
        rule: 'allow-list/too-wide',
        severity: 'warning',
        subject: subject(entry.cidr),
        message: `a /${cidr.prefix} range; the widest ${cidr.family === 'ipv4' ? 'IPv4' : 'IPv6'} range allowed is a /${widest}`,
      });
    }
    if (rules.requireNote && !entry.note?.trim()) {
      findings.push({
        rule: 'allow-list/no-note',
        severity: 'info',
        subject: subject(entry.cidr),
        message: 'the entry has no note saying why it is allowed',
      });
    }
    if (rules.baseline && !rules.baseline.some((expected) => sameRange(expected, cidr))) {
      findings.push({
        rule: 'allow-list/unexpected',
        severity: 'warning',
        subject: subject(entry.cidr),
        message: 'the entry is not in the baseline',
      });
    }
  }
  for (const expected of rules.baseline ?? []) {
    if (!ranges.some((cidr) => sameRange(cidr, expected))) {
      findings.push({
        rule: 'allow-list/missing-baseline',
        severity: 'warning',
        subject: subject(expected.text),
        message: 'a baseline range is missing from the allow list',
      });
    }
  }
  return findings;
}

/**
 * Audits every target workgroup. Findings are reported only once a workgroup's audit is
 * complete, so a retried attempt never reports them twice.
 */
function auditWorkgroups(
  ctx: ActionContext,
  rules: Params,
  done: (detail: Record<string, unknown>) => StepResult,
) {
  return ctx.forEachTarget(ctx.workgroups, workgroupRef, async (wg: SelectedWorkgroup, step) => {
    const { result: entries } = await ctx.api.listAllowedIps(wg.workgroupId, { signal: step.signal });
    const enforced = isEnforced(wg.workgroup);
    const findings = auditAllowList(wg.workgroupName, enforced, entries, rules);
    // a disabled allow list blocks nobody: asking would only spend a call
    if (rules.checkRunnerIp && enforced) {
      const { result } = await ctx.api.checkCurrentIp(wg.workgroupId, { signal: step.signal });
      if (!result.isAllowed) findings.push(runnerBlocked(wg.workgroupName, result.currentIp));
    }
    for (const finding of findings) ctx.finding(finding);
    return done({ entries: entries.length, findings: findings.length, enforced });
  });
}

/** Reports what is wrong with workgroups' IP allow lists; reads only, never changes one. */
export const allowListAudit: Action<typeof params> = {
  name: 'allow-list-audit',
  description:
    'Audit workgroup IP allow lists: forbidden or too-wide ranges, missing notes, baseline drift, enforcement.',
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
      forbid: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]
      maxPrefix: { ipv4: 24, ipv6: 48 }
      baseline: ["198.51.100.0/24", "203.0.113.10/32"]
`,

  // The audit only reads, so a dry run does the same work: same calls, same findings; only the
  // targets' outcome (`planned`) says it was a dry run.
  async plan(ctx, rules) {
    await auditWorkgroups(ctx, rules, (detail) => ({
      outcome: 'planned',
      reason: 'audited (read-only): findings as a run reports them',
      detail,
    }));
  },

  async run(ctx, rules) {
    await auditWorkgroups(ctx, rules, (detail) => ({ outcome: 'succeeded', detail }));
  },
};
