import type { NotifyFormat } from '../policy/index.js';
import type { OverdueEpisode, OverdueNotice } from './overdue.js';
import { clip, mrkdwn, type SlackBlock, type SlackMessage, slackEscape } from './slack.js';

/** The `json` format of an overdue notice, version 1; keys may be added, never removed or renamed. */
export interface OverduePayload {
  kind: 'nightshift.overdue';
  version: 1;
  /** `overdue`: the episode began; `cleared`: the job succeeded again. */
  event: OverdueNotice['event'];
  job: string;
  reason: OverdueEpisode['reason'];
  lastSuccessAt: string | null;
  dueBy: string;
  expectSuccessWithinMs: number | null;
  succeededAt: string | null;
  at: string;
  /** The job's runs in the console; null without `NIGHTSHIFT_CONSOLE_URL`. */
  link: string | null;
}

/** The console's page of a job's runs (its route `/runs?job=`). */
export function jobRunsLink(consoleUrl: string, job: string): string {
  return `${consoleUrl.replace(/\/+$/, '')}/runs?job=${encodeURIComponent(job)}`;
}

export function overdueJsonPayload(notice: OverdueNotice, link: string | undefined): OverduePayload {
  return {
    kind: 'nightshift.overdue',
    version: 1,
    event: notice.event,
    job: notice.job,
    reason: notice.episode.reason,
    lastSuccessAt: notice.episode.lastSuccessAt,
    dueBy: notice.episode.dueBy,
    expectSuccessWithinMs: notice.expectSuccessWithin,
    succeededAt: notice.succeededAt,
    at: notice.at,
    link: link ?? null,
  };
}

/** What happened, in one line: with an icon and the job in bold, or plain for phones. */
function overdueHeadline(notice: OverdueNotice, plain: boolean): string {
  const job = plain ? slackEscape(notice.job) : `*${slackEscape(notice.job)}*`;
  const since =
    notice.episode.lastSuccessAt === null
      ? 'no success on record'
      : `last success ${notice.episode.lastSuccessAt}`;
  if (notice.event === 'cleared')
    return `${plain ? 'nightshift:' : ':large_green_circle:'} ${job} is no longer overdue: it succeeded at ${notice.succeededAt}`;
  const what =
    notice.episode.reason === 'missed'
      ? `missed a firing (no scheduler ran at its tick; recorded ${notice.episode.dueBy})`
      : `has not succeeded on time: due by ${notice.episode.dueBy}`;
  return `${plain ? 'nightshift:' : ':hourglass:'} ${job} is overdue: ${what}; ${since}`;
}

export function overdueSlackPayload(notice: OverdueNotice, link: string | undefined): SlackMessage {
  const blocks: SlackBlock[] = [{ type: 'section', text: mrkdwn(overdueHeadline(notice, false)) }];
  const open = link ? ` · <${slackEscape(link)}|its runs in the console>` : '';
  blocks.push({ type: 'context', elements: [mrkdwn(`nightshift · overdue · ${notice.at}${open}`)] });
  return { text: clip(overdueHeadline(notice, true)), blocks };
}

/** The request body a sink of `format` gets for an overdue notice. */
export function formatOverdueNotice(
  format: NotifyFormat,
  notice: OverdueNotice,
  link: string | undefined,
): OverduePayload | SlackMessage {
  return format === 'slack' ? overdueSlackPayload(notice, link) : overdueJsonPayload(notice, link);
}
