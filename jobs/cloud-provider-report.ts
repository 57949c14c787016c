import { z } from 'zod';
import type { CloudProvider } from '../src/api/index.js';
import type { Action, Finding, PlanContext, StepResult } from '../src/engine/index.js';
import { readOnlyVerbs } from '../src/engine/index.js';
import {
  CloudProviderIdsSchema,
  isErrorStatus,
  lastErrorOf,
  type ProviderTarget,
  parseComponentVersions,
  providerFacts,
  providerLabel,
  providerRef,
  providerTargets,
} from './support/cloud-providers.js';

const params = z.strictObject({
  cloudProviderIds: CloudProviderIdsSchema,
  expectVersion: z.string().min(1).optional().meta({
    description:
      'The deployment version every provider should record: any other is a finding. Unset: not checked.',
  }),
  expectComponents: z.record(z.string().min(1), z.string().min(1)).optional().meta({
    description:
      'Component versions every provider should run, as { name: version }: a different or missing one is a finding. Unset: not checked.',
  }),
});
type Params = z.output<typeof params>;

/**
 * The findings of one provider's record against the job's expectations. Pure: it sees only what
 * it is given.
 */
export function auditCloudProvider(label: string, cp: CloudProvider, rules: Params): Finding[] {
  const findings: Finding[] = [];
  const lastError = lastErrorOf(cp);
  if (lastError || isErrorStatus(cp.status)) {
    findings.push({
      rule: 'cloud-provider/error',
      severity: 'critical',
      subject: label,
      message: [`status ${cp.status ?? 'unknown'}`, lastError && `last error: ${lastError}`]
        .filter(Boolean)
        .join('; '),
    });
  }
  if (rules.expectVersion !== undefined && cp.version !== rules.expectVersion) {
    findings.push({
      rule: 'cloud-provider/version-drift',
      severity: 'warning',
      subject: `${label} version`,
      message: `records version ${cp.version ?? 'none'}; expected ${rules.expectVersion}`,
    });
  }
  if (rules.expectComponents) {
    const running = parseComponentVersions(cp.component_versions);
    for (const [component, expected] of Object.entries(rules.expectComponents)) {
      const actual = running?.[component];
      if (actual === expected) continue;
      findings.push({
        rule: 'cloud-provider/version-drift',
        severity: 'warning',
        subject: `${label} ${component}`,
        message: running
          ? `runs ${component} ${actual ?? '(not installed)'}; expected ${expected}`
          : `component versions are unreadable ("${cp.component_versions}"); expected ${component} ${expected}`,
      });
    }
  }
  return findings;
}

/**
 * Reads every provider once. Findings are reported only after the read succeeded, so a retried
 * attempt never reports them twice.
 */
function reportProviders(
  ctx: PlanContext,
  rules: Params,
  done: (detail: Record<string, unknown>) => StepResult,
) {
  const targets = providerTargets(ctx, rules.cloudProviderIds);
  return ctx.forEachTarget(targets, providerRef, async (target: ProviderTarget, step) => {
    const { result: cp } = await ctx.api.getCloudProvider(target.id, { signal: step.signal });
    const findings = auditCloudProvider(providerLabel(target, cp), cp, rules);
    return {
      ...done({
        ...providerFacts(cp),
        platform: cp.platform ?? null,
        region: cp.region ?? null,
        updatedAt: cp.updated_at ?? null,
        workgroups: target.workgroups,
        findings: findings.length,
      }),
      findings,
    };
  });
}

/** Reports the state and versions of BYOC cloud providers; reads only, never changes one. */
export const cloudProviderReport: Action<typeof params> = {
  name: 'cloud-provider-report',
  description:
    'Report the status, versions, node groups and last error of cloud providers; flag errors and version drift.',
  destructive: false,
  scope: 'workgroup',
  targetOptional: true,
  params,
  example: `version: 1
jobs:
  byoc-report:
    description: Morning check of every workgroup's cloud provider against the release we run
    schedule: "0 7 * * 1-5"
    timezone: Europe/Berlin
    action: cloud-provider-report
    target: { workgroups: ["*"] }
    with:
      expectVersion: "1.5.0"
      expectComponents: { engine: "4.2.0", gateway: "1.10.0" }
`,

  ...readOnlyVerbs(reportProviders, 'read (read-only): findings as a run reports them'),
};
