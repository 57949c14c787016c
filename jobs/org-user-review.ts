import { z } from 'zod';
import type { OrgUser } from '../src/api/index.js';
import {
  type Action,
  DurationSchema,
  type Finding,
  type PlanContext,
  readOnlyVerbs,
  type StepResult,
} from '../src/engine/index.js';

const DAY_MS = 86_400_000;

const params = z.strictObject({
  staleAfter: DurationSchema.prefault('90d').meta({
    description:
      'An enabled user who has not signed in for this long is stale (a duration such as 90d, up to 365d).',
    default: '90d',
  }),
  flagDisabled: z
    .boolean()
    .default(true)
    .meta({ description: 'A disabled user (still in the organization) is a finding.', default: true }),
  flagNoRoles: z
    .boolean()
    .default(true)
    .meta({ description: 'An enabled user without any role is a finding.', default: true }),
});
type Params = z.output<typeof params>;

/** The one target of a review: the organization's user list is a single read. */
const REVIEW_KEY = 'org-users';

export interface ReviewCounts {
  users: number;
  disabled: number;
  stale: number;
  noRoles: number;
}

function subjectOf(user: OrgUser): string {
  return user.username ?? user.email ?? user.id ?? '(unnamed user)';
}

function days(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** Why an enabled user counts as stale, or undefined when they signed in recently enough. */
function staleness(user: OrgUser, staleAfterMs: number, now: number): string | undefined {
  const lastLogin = user.metadata?.lastLogin;
  const at = lastLogin ? Date.parse(lastLogin) : Number.NaN;
  if (!Number.isNaN(at)) {
    return now - at >= staleAfterMs ? `last signed in ${days(now - at)} days ago (${lastLogin})` : undefined;
  }
  // No usable last login: judge by the account's age, so a new account is not flagged on day one.
  const created = user.created ? Date.parse(user.created) : Number.NaN;
  if (!Number.isNaN(created) && now - created < staleAfterMs) return undefined;
  const recorded = lastLogin ? `an unreadable last login ("${lastLogin}")` : 'no last login recorded';
  return Number.isNaN(created) ? recorded : `${recorded}; created ${days(now - created)} days ago`;
}

/**
 * The findings of an organization's users against the review's rules. Pure: `now` is given. A
 * disabled user cannot sign in, so only `org-user/disabled` applies to one (staleness and roles
 * are moot until it is enabled again).
 */
export function reviewOrgUsers(
  users: readonly OrgUser[],
  rules: Params,
  now: number,
): { findings: Finding[]; counts: ReviewCounts } {
  const findings: Finding[] = [];
  const counts: ReviewCounts = { users: users.length, disabled: 0, stale: 0, noRoles: 0 };
  for (const user of users) {
    const subject = subjectOf(user);
    if (user.enabled === false) {
      counts.disabled++;
      if (rules.flagDisabled) {
        findings.push({
          rule: 'org-user/disabled',
          severity: 'info',
          subject,
          message: 'disabled but still in the organization: remove the account if it is no longer needed',
        });
      }
      continue;
    }
    const stale = staleness(user, rules.staleAfter, now);
    if (stale) {
      counts.stale++;
      findings.push({
        rule: 'org-user/stale',
        severity: 'warning',
        subject,
        message: `enabled but ${stale}: disable the account or confirm it is still needed`,
      });
    }
    if ((user.roles ?? []).length === 0) {
      counts.noRoles++;
      if (rules.flagNoRoles) {
        findings.push({
          rule: 'org-user/no-roles',
          severity: 'info',
          subject,
          message: 'enabled but holds no role',
        });
      }
    }
  }
  return { findings, counts };
}

/**
 * Lists the organization's users once and reviews them; the findings go with the step's result,
 * so a failed attempt reports none and a retry does not report them twice.
 */
function review(ctx: PlanContext, rules: Params, done: (detail: Record<string, unknown>) => StepResult) {
  return ctx.forEachTarget(
    [REVIEW_KEY],
    (key) => ({ key }),
    async (_, step) => {
      const { result: users } = await ctx.api.listOrgUsers({ signal: step.signal });
      const { findings, counts } = reviewOrgUsers(users, rules, ctx.now().getTime());
      return {
        ...done({ ...counts, staleAfterDays: rules.staleAfter / DAY_MS, findings: findings.length }),
        findings,
      };
    },
  );
}

/** Reviews the organization's users: stale, disabled and role-less accounts. Reads only. */
export const orgUserReview: Action<typeof params> = {
  name: 'org-user-review',
  description:
    'Review the organization users: flag accounts not signed in for a while, disabled ones and ones without roles.',
  destructive: false,
  scope: 'none',
  needsBearerToken: true,
  params,
  example: `version: 1
jobs:
  user-review:
    description: Monthly access review of the organization's users
    schedule: "0 8 1 * *"
    timezone: Europe/Berlin
    action: org-user-review
    with:
      staleAfter: 60d
      flagDisabled: true
      flagNoRoles: true
`,

  ...readOnlyVerbs(review, 'reviewed (read-only): findings as a run reports them'),
};
