import type {
  ErrorRecord,
  Finding,
  RunCounts,
  RunOutcome,
  RunSummary,
  RunTrigger,
  WindowActed,
  WindowEvidence,
} from '../engine/index.js';
import type { NotifyEvent, NotifyFormat } from '../policy/index.js';
import { isStranded, type NotifiableOutcome } from './events.js';
import {
  clip,
  listSection,
  mrkdwn,
  plural,
  type SlackBlock,
  type SlackMessage,
  slackEscape,
} from './slack.js';

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
  /** A window reconciliation's record of what it found and did; undefined for a job's run. */
  readonly window: WindowEvidence | undefined;
  /** The run's page in the console (`NIGHTSHIFT_CONSOLE_URL`); undefined without one. */
  readonly link: string | undefined;
}

/** The run's page in the console at `consoleUrl` (its route `/runs/:id`). */
export function runLink(consoleUrl: string, runId: string): string {
  return `${consoleUrl.replace(/\/+$/, '')}/runs/${encodeURIComponent(runId)}`;
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
  /** The run's page in the console; null without `NIGHTSHIFT_CONSOLE_URL`. */
  link: string | null;
  /** The run's action-specific record (a drill's evidence, a window's counts), as `nightshift history` keeps it. */
  evidence: Record<string, unknown> | null;
  /** What a window's reconciliation paused and resumed, and the hourly cost it avoids; null without `acted`. */
  acted: WindowActed | null;
  /** The drift streak that raised `drift-persists`; null without it. */
  driftPersists: { workspaces: number; reconciliations: number; since: string } | null;
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
    link: notification.link ?? null,
    evidence: summary.evidence ?? null,
    acted: notification.events.includes('acted') ? (notification.window?.done ?? null) : null,
    driftPersists: driftPersists(notification),
  };
}

function driftPersists(notification: Notification): RunPayload['driftPersists'] {
  const streak = notification.window?.driftStreak;
  if (!notification.events.includes('drift-persists') || !streak) return null;
  return { workspaces: streak.workspaces, reconciliations: streak.reconciliations, since: streak.since };
}

const EMOJI: Record<NotifyEvent, string> = {
  failure: ':red_circle:',
  partial: ':large_orange_circle:',
  halted: ':octagonal_sign:',
  cancelled: ':no_entry_sign:',
  'approval-needed': ':raised_hand:',
  overdue: ':hourglass:',
  stranded: ':rotating_light:',
  'drift-persists': ':warning:',
  findings: ':mag:',
  recovered: ':large_green_circle:',
  acted: ':crescent_moon:',
  succeeded: ':white_check_mark:',
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

/** The event a message's headline tells of: the most serious the sink hears, news last. */
const HEADLINE_ORDER: readonly NotifyEvent[] = [
  'failure',
  'partial',
  'halted',
  'cancelled',
  'approval-needed',
  'overdue',
  'stranded',
  'drift-persists',
  'recovered',
  'acted',
  'findings',
  'succeeded',
];

const PREVIOUS: Partial<Record<NotifiableOutcome, string>> = { partial: 'partly failed', halted: 'halted' };

/** `paused 12, resumed 0, 1 failed; about 14.40 EUR an hour avoided`. */
export function actedText(done: WindowActed): string {
  const counts = [`paused ${done.paused}`, `resumed ${done.resumed}`];
  if (done.failed > 0) counts.push(`${done.failed} failed`);
  const unpriced = done.unpriced > 0 ? ` (${done.unpriced} without a price)` : '';
  const cost =
    done.hourlyCostAvoided !== null
      ? `; about ${done.hourlyCostAvoided.toFixed(2)} ${done.currency} an hour avoided${unpriced}`
      : done.paused > 0
        ? '; cost avoided unknown: no price for the workspaces paused (pricing: in the policy)'
        : '';
  return `${counts.join(', ')}${cost}`;
}

function driftText(window: WindowEvidence | undefined): string {
  const streak = window?.driftStreak;
  if (!streak) return 'drift persists';
  return `${plural(streak.workspaces, 'workspace')} still not as the window wants after ${streak.reconciliations} reconciliations (since ${streak.since})`;
}

/** Events whose headline reads `job: what happened` rather than `job failed…`. */
const COLON: ReadonlySet<NotifyEvent> = new Set([
  'approval-needed',
  'stranded',
  'drift-persists',
  'acted',
  'findings',
]);

/** What each event's headline says after the job's name. */
const SAYS: Record<NotifyEvent, (notification: Notification, findings: string) => string> = {
  failure: ({ summary }) => {
    const why = summary.reason ?? summary.error?.message;
    return `failed${why ? `: ${slackEscape(why)}` : ''}`;
  },
  partial: ({ summary }) =>
    `partly failed: ${summary.counts.failed} of ${plural(summary.counts.total, 'target')} failed`,
  halted: ({ summary }) => slackEscape(summary.reason ?? 'halted'),
  cancelled: ({ summary: { reason, counts } }) =>
    `${slackEscape(reason ?? 'cancelled')}: stopped after ${plural(counts.total, 'target')} (${counts.succeeded} succeeded, ${counts.failed} failed)`,
  'approval-needed': ({ summary }) => slackEscape(summary.reason ?? 'awaiting approval'),
  // raised by the scheduler's watch, never by a run (overdue-format.ts words its notices)
  overdue: () => 'is overdue',
  stranded: ({ newFindings }) =>
    `${plural(newFindings.filter(isStranded).length, 'workspace')} paused by nightshift and owned by nobody (stranded): nothing hands them back until \`nightshift adopt\` makes their owner own them again`,
  'drift-persists': ({ window }) => driftText(window),
  recovered: ({ previousOutcome }) =>
    `recovered: succeeded after a ${(previousOutcome && PREVIOUS[previousOutcome]) ?? 'failed'} run`,
  acted: ({ window }) =>
    window ? `${window.up ? 'uptime' : 'off period'}: ${actedText(window.done)}` : 'acted',
  findings: (_, findings) => findings,
  succeeded: ({ summary }) => `succeeded: ${targetCounts(summary.counts)}`,
};

/**
 * One line saying what happened, most serious event first: with an icon and the job in bold for
 * the message, plain for the fallback text that phones show in notifications.
 */
function headline(notification: Notification, plain = false): string {
  const { summary, events } = notification;
  const event = HEADLINE_ORDER.find((candidate) => events.includes(candidate)) ?? 'findings';
  const job = plain ? slackEscape(summary.job) : `*${slackEscape(summary.job)}*`;
  const findings = events.includes('findings') ? findingsChange(notification) : '';
  const also = [
    event !== 'acted' && events.includes('acted') && notification.window
      ? actedText(notification.window.done)
      : '',
    event !== 'findings' ? findings : '',
  ]
    .filter(Boolean)
    .map((part) => `; ${part}`)
    .join('');
  const colon = COLON.has(event) ? ':' : '';
  return `${plain ? 'nightshift:' : EMOJI[event]} ${job}${colon} ${SAYS[event](notification, findings)}${also}`;
}

/** What a window did (`acted`) and the drift it keeps finding (`drift-persists`), when the sink hears of them. */
function windowBlocks({ events, window, summary }: Notification): SlackBlock[] {
  if (!window) return [];
  const blocks: SlackBlock[] = [];
  if (events.includes('acted')) {
    const { done } = window;
    const cost =
      done.hourlyCostAvoided === null
        ? 'unknown (no price)'
        : `${done.hourlyCostAvoided.toFixed(2)} ${done.currency}${done.unpriced > 0 ? ` (${done.unpriced} without a price)` : ''}`;
    blocks.push({
      type: 'section',
      text: mrkdwn(`*${window.up ? 'Uptime' : 'Off period'}* \`${slackEscape(window.period)}\``),
      fields: [
        mrkdwn(`*Paused*\n${done.paused}`),
        mrkdwn(`*Resumed*\n${done.resumed}`),
        mrkdwn(`*Failed*\n${done.failed}`),
        mrkdwn(`*Est. cost avoided an hour*\n${cost}`),
      ],
    });
  }
  if (events.includes('drift-persists')) {
    const drifting = summary.targets.filter(
      (target) => target.outcome === 'failed' || target.reason?.startsWith('drift:'),
    );
    const lines = drifting.map(
      (target) =>
        `• ${slackEscape(`${target.workgroupName ?? target.workgroupId}/${target.workspaceName ?? target.workspaceId}`)}: ${slackEscape(target.error?.message ?? target.reason ?? '')}`,
    );
    if (lines.length > 0) blocks.push(listSection('Drifting', lines, drifting.length));
  }
  return blocks;
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
  blocks.push(...windowBlocks(notification));
  const when = summary.finishedAt ? ` · finished ${summary.finishedAt}` : '';
  const link = notification.link ? ` · <${slackEscape(notification.link)}|open in the console>` : '';
  blocks.push({
    type: 'context',
    elements: [
      mrkdwn(`nightshift · run \`${slackEscape(summary.runId)}\` · ${summary.trigger}${when}${link}`),
    ],
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
