import type { NotifyFormat, PolicyProblem } from '../policy/index.js';
import {
  clip,
  listSection,
  mrkdwn,
  plural,
  type SlackBlock,
  type SlackMessage,
  slackEscape,
} from './slack.js';

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
