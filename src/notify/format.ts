import type { ErrorRecord, Finding, RunCounts, RunOutcome, RunSummary, RunTrigger } from '../engine/index.js';
import type { NotifyEvent, NotifyFormat, PolicyProblem } from '../policy/index.js';
import { isStranded, type NotifiableOutcome } from './events.js';

/** What one sink is told about one run: the events it listens to, and what changed. */
export interface Notification {
  /** The events raised by the run that the sink's `on:` lists; never empty. */
  readonly events: readonly NotifyEvent[];
  readonly summary: RunSummary;
  readonly previousOutcome: NotifiableOutcome | undefined;
  /** Those the sink hears of: every finding when it listens to `findings`, else stranded workspaces only. */
  readonly newFindings: readonly Finding[];
  /** As `newFindings`. */
  readonly resolvedFindings: readonly Finding[];
}

/** Most findings of each list a JSON payload carries; the `findings` counts are always complete. */
export const MAX_PAYLOAD_FINDINGS = 100;
/** Most failed targets a JSON payload carries; `counts.failed` is always complete. */
export const MAX_PAYLOAD_TARGETS = 20;

export interface FailedTargetPayload {
  /** `workgroupId/workspaceId`, or `workgroupId`. */
  key: string;
  workgroup: string | null;
  workspace: string | null;
  error: ErrorRecord | null;
}

/**
 * The `json` format, version 1 (docs/notifications.md). Every key is always present, `null`
 * when it does not apply; keys may be added in later versions, never removed or renamed.
 */
export interface RunPayload {
  kind: 'nightshift.run';
  version: 1;
  events: NotifyEvent[];
  job: string;
  action: string;
  runId: string;
  trigger: RunTrigger;
  outcome: RunOutcome;
  previousOutcome: NotifiableOutcome | null;
  reason: string | null;
  error: ErrorRecord | null;
  scheduledAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  counts: RunCounts;
  /** The first MAX_PAYLOAD_TARGETS failed targets. */
  failedTargets: FailedTargetPayload[];
  /** How many findings the run reports, and how many of them are new; how many were resolved. */
  findings: { open: number; new: number; resolved: number };
  newFindings: Finding[];
  resolvedFindings: Finding[];
}

const SEVERITY_ORDER: Record<Finding['severity'], number> = { critical: 0, warning: 1, info: 2 };

/** Most severe first, then by rule and subject, so the top of a capped list is what matters. */
function bySeverity(findings: readonly Finding[]): Finding[] {
  return [...findings].sort(
    (a, b) =>
      SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
      a.rule.localeCompare(b.rule) ||
      a.subject.localeCompare(b.subject),
  );
}

function failedTargets(summary: RunSummary): FailedTargetPayload[] {
  return summary.targets
    .filter((target) => target.outcome === 'failed')
    .slice(0, MAX_PAYLOAD_TARGETS)
    .map((target) => ({
      key: target.key,
      workgroup: target.workgroupName ?? target.workgroupId ?? null,
      workspace: target.workspaceName ?? target.workspaceId ?? null,
      error: target.error ?? null,
    }));
}

export function jsonPayload(notification: Notification): RunPayload {
  const { summary } = notification;
  return {
    kind: 'nightshift.run',
    version: 1,
    events: [...notification.events],
    job: summary.job,
    action: summary.action,
    runId: summary.runId,
    trigger: summary.trigger,
    outcome: summary.outcome,
    previousOutcome: notification.previousOutcome ?? null,
    reason: summary.reason ?? null,
    error: summary.error ?? null,
    scheduledAt: summary.scheduledAt ?? null,
    startedAt: summary.startedAt ?? null,
    finishedAt: summary.finishedAt ?? null,
    durationMs: summary.durationMs ?? null,
    counts: summary.counts,
    failedTargets: failedTargets(summary),
    findings: {
      open: summary.findings.length,
      new: notification.newFindings.length,
      resolved: notification.resolvedFindings.length,
    },
    newFindings: bySeverity(notification.newFindings).slice(0, MAX_PAYLOAD_FINDINGS),
    resolvedFindings: bySeverity(notification.resolvedFindings).slice(0, MAX_PAYLOAD_FINDINGS),
  };
}

/** A Slack incoming-webhook message: `text` is the fallback shown in notifications. */
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}
export type SlackBlock =
  | { type: 'section'; text: SlackText; fields?: SlackText[] }
  | { type: 'context'; elements: SlackText[] };
export interface SlackText {
  type: 'mrkdwn';
  text: string;
}

/** Lines of findings and failed targets a Slack message lists; the rest is counted. */
export const MAX_SLACK_LINES = 10;
/** Slack refuses a section text over 3000 characters. */
const MAX_SLACK_TEXT = 3000;

/** Slack reads `&`, `<` and `>` as markup: text from the run is escaped. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function clip(text: string, max = MAX_SLACK_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function mrkdwn(text: string): SlackText {
  return { type: 'mrkdwn', text: clip(text) };
}

const EMOJI: Record<NotifyEvent, string> = {
  failure: ':red_circle:',
  partial: ':large_orange_circle:',
  halted: ':octagonal_sign:',
  cancelled: ':no_entry_sign:',
  recovered: ':large_green_circle:',
  stranded: ':rotating_light:',
  findings: ':mag:',
};
const PLAIN: Record<NotifyEvent, string> = {
  failure: 'nightshift:',
  partial: 'nightshift:',
  halted: 'nightshift:',
  cancelled: 'nightshift:',
  recovered: 'nightshift:',
  stranded: 'nightshift:',
  findings: 'nightshift:',
};

function targetCounts(counts: RunCounts): string {
  const parts = (['succeeded', 'failed', 'skipped', 'planned'] as const)
    .filter((key) => counts[key] > 0)
    .map((key) => `${counts[key]} ${key}`);
  return parts.length === 0 ? 'no targets' : `${parts.join(', ')} (of ${counts.total})`;
}

function findingsChange(notification: Notification): string {
  const parts: string[] = [];
  if (notification.newFindings.length > 0) parts.push(plural(notification.newFindings.length, 'new finding'));
  if (notification.resolvedFindings.length > 0)
    parts.push(`${notification.resolvedFindings.length} resolved`);
  return parts.join(', ');
}

/**
 * One line saying what happened, most serious event first: with an icon and the job in bold for
 * the message, plain for the fallback text that phones show in notifications.
 */
function headline(notification: Notification, plain = false): string {
  const { summary, events } = notification;
  const job = plain ? slackEscape(summary.job) : `*${slackEscape(summary.job)}*`;
  const ICONS = plain ? PLAIN : EMOJI;
  const findings = events.includes('findings') ? findingsChange(notification) : '';
  const also = findings ? `; ${findings}` : '';
  if (events.includes('failure')) {
    const why = summary.reason ?? summary.error?.message;
    return `${ICONS.failure} ${job} failed${why ? `: ${slackEscape(why)}` : ''}${also}`;
  }
  if (events.includes('partial')) {
    return `${ICONS.partial} ${job} partly failed: ${summary.counts.failed} of ${plural(summary.counts.total, 'target')} failed${also}`;
  }
  if (events.includes('halted')) {
    return `${ICONS.halted} ${job} ${slackEscape(summary.reason ?? 'halted')}${also}`;
  }
  if (events.includes('cancelled')) {
    const { counts } = summary;
    return `${ICONS.cancelled} ${job} ${slackEscape(summary.reason ?? 'cancelled')}: stopped after ${plural(counts.total, 'target')} (${counts.succeeded} succeeded, ${counts.failed} failed)${also}`;
  }
  if (events.includes('stranded')) {
    const stranded = notification.newFindings.filter(isStranded).length;
    return `${ICONS.stranded} ${job}: ${plural(stranded, 'workspace')} paused by nightshift and owned by nobody (stranded): nothing hands them back until \`nightshift adopt\` makes their owner own them again${also}`;
  }
  if (events.includes('recovered')) {
    return `${ICONS.recovered} ${job} recovered: succeeded after a ${notification.previousOutcome === 'partial' ? 'partly failed' : notification.previousOutcome === 'halted' ? 'halted' : 'failed'} run${also}`;
  }
  return `${ICONS.findings} ${job}: ${findings}`;
}

function listSection(title: string, lines: readonly string[], total: number): SlackBlock {
  const shown = lines.slice(0, MAX_SLACK_LINES);
  const more = total > shown.length ? `\n…and ${total - shown.length} more` : '';
  return { type: 'section', text: mrkdwn(`*${title}*\n${shown.join('\n')}${more}`) };
}

function findingLine(finding: Finding): string {
  return `• \`${finding.severity}\` ${slackEscape(finding.rule)} · ${slackEscape(finding.subject)}: ${slackEscape(finding.message)}`;
}

/** The `slack` format: a readable message for a Slack incoming webhook (or anything Slack-compatible). */
export function slackPayload(notification: Notification): SlackMessage {
  const { summary } = notification;
  const title = headline(notification);
  const blocks: SlackBlock[] = [
    {
      type: 'section',
      text: mrkdwn(title),
      fields: [
        mrkdwn(`*Outcome*\n${summary.outcome}`),
        mrkdwn(`*Targets*\n${targetCounts(summary.counts)}`),
        mrkdwn(`*Action*\n${slackEscape(summary.action)}`),
        mrkdwn(`*Findings open*\n${summary.findings.length}`),
      ],
    },
  ];
  const failed = summary.targets.filter((target) => target.outcome === 'failed');
  if (
    failed.length > 0 &&
    (notification.events.includes('failure') || notification.events.includes('partial'))
  ) {
    const lines = failed.map((target) => {
      const name = [target.workgroupName ?? target.workgroupId, target.workspaceName ?? target.workspaceId]
        .filter((part) => part !== undefined)
        .join('/');
      const error = target.error ? `: ${target.error.message}` : '';
      return `• ${slackEscape(name || target.key)}${slackEscape(error)}`;
    });
    blocks.push(listSection('Failed targets', lines, failed.length));
  }
  if (notification.newFindings.length > 0) {
    const lines = bySeverity(notification.newFindings).map(findingLine);
    blocks.push(listSection('New findings', lines, notification.newFindings.length));
  }
  if (notification.resolvedFindings.length > 0) {
    const lines = bySeverity(notification.resolvedFindings).map(
      (finding) => `• ${slackEscape(finding.rule)} · ${slackEscape(finding.subject)}`,
    );
    blocks.push(listSection('Resolved', lines, notification.resolvedFindings.length));
  }
  const when = summary.finishedAt ? ` · finished ${summary.finishedAt}` : '';
  blocks.push({
    type: 'context',
    elements: [mrkdwn(`nightshift · run \`${slackEscape(summary.runId)}\` · ${summary.trigger}${when}`)],
  });
  return { text: clip(headline(notification, true)), blocks };
}

/** The request body a sink of `format` gets. */
export function formatNotification(
  format: NotifyFormat,
  notification: Notification,
): RunPayload | SlackMessage {
  return format === 'slack' ? slackPayload(notification) : jsonPayload(notification);
}

/** What the sinks are told about the policy itself: an edit of the file rejected, or fixed. */
export interface PolicyNotice {
  /**
   * - `rejected`: the scheduler refused an edit of the file and runs the policy it had.
   * - `accepted`: an edit after a rejected one was taken; the file and the schedule agree again.
   */
  readonly event: 'rejected' | 'accepted';
  /** The policy file, as the scheduler was given it. */
  readonly file: string;
  /** The sha256 of the policy in force (as in the log and the runs' `policySha`). */
  readonly policySha: string;
  /** The sha256 of the rejected text: the one just refused, or for `accepted` the one fixed. */
  readonly rejectedSha: string;
  /** What is wrong with the rejected text; empty for `accepted`. */
  readonly problems: readonly PolicyProblem[];
  /** When it happened (ISO, UTC). */
  readonly at: string;
}

/** Most problems a policy notice lists; `problemCount` is always complete. */
export const MAX_PAYLOAD_PROBLEMS = 50;

/** The `json` format of a policy notice, version 1; keys may be added, never removed or renamed. */
export interface PolicyPayload {
  kind: 'nightshift.policy';
  version: 1;
  event: PolicyNotice['event'];
  file: string;
  policySha: string;
  rejectedSha: string;
  problemCount: number;
  /** The first MAX_PAYLOAD_PROBLEMS problems, in file order. */
  problems: PolicyProblem[];
  at: string;
}

export function policyJsonPayload(notice: PolicyNotice): PolicyPayload {
  return {
    kind: 'nightshift.policy',
    version: 1,
    event: notice.event,
    file: notice.file,
    policySha: notice.policySha,
    rejectedSha: notice.rejectedSha,
    problemCount: notice.problems.length,
    problems: notice.problems
      .slice(0, MAX_PAYLOAD_PROBLEMS)
      .map(({ file, line, col, message }) => ({ file, line, col, message })),
    at: notice.at,
  };
}

/** The `slack` format of a policy notice. */
export function policySlackPayload(notice: PolicyNotice): SlackMessage {
  const file = `\`${slackEscape(notice.file)}\``;
  const sha = `\`${notice.policySha.slice(0, 12)}\``;
  const [icon, title] =
    notice.event === 'rejected'
      ? [
          ':warning:',
          `policy edit rejected: ${file} has ${plural(notice.problems.length, 'problem')}; still running policy ${sha}`,
        ]
      : [':large_green_circle:', `policy reloaded: ${file} is in force again (policy ${sha})`];
  const blocks: SlackBlock[] = [{ type: 'section', text: mrkdwn(`${icon} *nightshift* ${title}`) }];
  if (notice.problems.length > 0) {
    const lines = notice.problems.map(
      (problem) => `• ${slackEscape(`${problem.file}:${problem.line}:${problem.col}: ${problem.message}`)}`,
    );
    blocks.push(listSection('Problems', lines, notice.problems.length));
  }
  blocks.push({
    type: 'context',
    elements: [mrkdwn(`nightshift · policy · ${notice.at}`)],
  });
  return { text: clip(`nightshift: ${title}`), blocks };
}

/** The request body a sink of `format` gets for a policy notice. */
export function formatPolicyNotice(format: NotifyFormat, notice: PolicyNotice): PolicyPayload | SlackMessage {
  return format === 'slack' ? policySlackPayload(notice) : policyJsonPayload(notice);
}
