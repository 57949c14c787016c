/** Slack's message shape and the helpers every Slack message of nightshift uses. */

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

export function clip(text: string, max = MAX_SLACK_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export function mrkdwn(text: string): SlackText {
  return { type: 'mrkdwn', text: clip(text) };
}

export function listSection(title: string, lines: readonly string[], total: number): SlackBlock {
  const shown = lines.slice(0, MAX_SLACK_LINES);
  const more = total > shown.length ? `\n…and ${total - shown.length} more` : '';
  return { type: 'section', text: mrkdwn(`*${title}*\n${shown.join('\n')}${more}`) };
}
