import {
  HOLD_STATES,
  type Hold,
  type HoldState,
  holdCoverage,
  holdPatternProblem,
  holdReach,
  workspacesHeldBy,
} from '../../../engine/index.js';
import { parseDuration } from '../../../policy/index.js';
import type { HoldPreviewView, HoldsView } from '../model.js';
import type { ConsoleSources, PolicyInForce } from './sources.js';

/** The longest hold the console places, as the CLI's: an exception, anything longer belongs in the policy. */
const MAX_HOLD_MS = 366 * 86_400_000;

/** The hold form's fields as text, as a browser sends them. */
export type HoldForm = HoldPreviewView['form'];

function field(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  return typeof value === 'string' ? value.trim().slice(0, 1_000) : '';
}

/** The hold form's fields of a query or a form body; absent ones are empty. */
export function holdForm(body: unknown): HoldForm {
  const fields = (body ?? {}) as Record<string, unknown>;
  return {
    pattern: field(fields, 'pattern'),
    state: field(fields, 'state'),
    for: field(fields, 'for'),
    until: field(fields, 'until'),
    reason: field(fields, 'reason'),
  };
}

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** When an exception asked for `for` (a duration) or `until` (an instant) ends; a message when it cannot. */
export function exceptionEnd(
  form: { for: string; until: string },
  now: Date,
  required: boolean,
): Date | undefined | string {
  if (form.for && form.until) return 'give a duration or an end, not both';
  if (!form.for && !form.until) return required ? 'give how long (2h, 3d) or until when' : undefined;
  if (form.for) {
    const ms = parseDuration(form.for);
    if (ms === undefined || ms <= 0) return `"${form.for}" is not a duration like 90m, 2h or 3d`;
    if (ms > MAX_HOLD_MS) return 'at most 366d; put a longer exception in the policy';
    return new Date(now.getTime() + ms);
  }
  const end = new Date(form.until);
  if (!INSTANT.test(form.until) || Number.isNaN(end.getTime()))
    return `"${form.until}" is not an ISO 8601 instant with Z or an offset, e.g. 2026-12-01T08:00:00Z`;
  if (end.getTime() <= now.getTime()) return `${form.until} is in the past`;
  return end;
}

/** The hold a form asks for, placed by `by` at `now`; a message saying what is wrong otherwise. */
export function holdFromForm(form: HoldForm, by: string, now: Date): Hold | string {
  if (!form.pattern) return 'name the workspaces: <workgroup>/<workspace>, names, ids or globs';
  const patternProblem = holdPatternProblem(form.pattern);
  if (patternProblem) return patternProblem;
  if (!(HOLD_STATES as readonly string[]).includes(form.state))
    return `the state must be one of ${HOLD_STATES.join(', ')}`;
  const until = exceptionEnd(form, now, true);
  if (typeof until === 'string' || !until) return until ?? 'give how long (2h, 3d) or until when';
  if (!form.reason) return 'say why: the reason is shown with the hold and in the audit trail';
  return {
    pattern: form.pattern,
    state: form.state as HoldState,
    until: until.toISOString(),
    reason: form.reason,
    by,
    createdAt: now.toISOString(),
  };
}

/** The holds in force, each with how many workspaces of the last listing it matches. */
export async function holdsView(sources: ConsoleSources, now: Date): Promise<HoldsView> {
  const [holds, listing] = await Promise.all([sources.state.holds.active(now), sources.listings.latest()]);
  return {
    generatedAt: now.toISOString(),
    holds: [...holds]
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .map((hold) => ({
        hold,
        matches: listing ? workspacesHeldBy(hold.pattern, listing.workgroups).length : null,
      })),
  };
}

/**
 * What a hold would reach, from the listing the last run kept (the console never calls the API)
 * and the policy in force: the workspaces it matches, and which of them nothing acts on.
 */
export async function holdPreview(
  sources: ConsoleSources,
  policy: PolicyInForce,
  form: HoldForm,
  now: Date,
): Promise<HoldPreviewView> {
  const asked = holdFromForm(form, 'preview', now);
  const problem = typeof asked === 'string' ? asked : null;
  const [listing, inForce] = await Promise.all([sources.listings.latest(), policy.read()]);
  const readable = typeof inForce.policy === 'string' ? undefined : inForce.policy;
  const workgroups = listing?.workgroups;
  const reach =
    form.pattern && !holdPatternProblem(form.pattern)
      ? holdReach(form.pattern, {
          workgroups,
          coverage: readable && workgroups ? holdCoverage(readable.jobs, workgroups) : undefined,
        })
      : undefined;
  const idle = new Set(reach?.idle?.map((ws) => `${ws.workgroupId}/${ws.workspaceId}`));
  return {
    generatedAt: now.toISOString(),
    form,
    problem,
    listing: listing
      ? `as run ${listing.runId} listed it at ${listing.at}`
      : 'no run has kept a listing in Redis yet',
    matches: reach
      ? reach.matched.map((ws) => ({
          workspace: `${ws.workgroupName}/${ws.workspaceName}`,
          status: ws.status ?? null,
          nothingActs: reach.idle ? idle.has(`${ws.workgroupId}/${ws.workspaceId}`) : null,
        }))
      : null,
    policyProblem: typeof inForce.policy === 'string' ? inForce.policy : null,
  };
}
