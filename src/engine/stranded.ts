import type { Ownership } from './ownership.js';
import type { Finding } from './summary.js';

/** The rule of a stranded workspace's finding. */
export const STRANDED_RULE = 'stranded';

/** How a finding and a drift row name the workspace of a journal entry. */
export function strandedSubject(entry: Ownership): string {
  return `${entry.workgroupName ?? entry.workgroupId}/${entry.workspaceName ?? entry.workspaceId}`;
}

/**
 * A stranded workspace as a finding: stopped, owned by nobody, yet the pause journal holds a pause
 * nightshift sent for it (an intent, or a pause the API accepted). Nothing would hand it back
 * until `nightshift adopt` makes its owner own it again.
 */
export function strandedFinding(entry: Ownership): Finding {
  const request = entry.requestId ? `, request ${entry.requestId}` : '';
  const what = entry.state === 'confirmed' ? 'paused' : 'pause sent (its answer unknown)';
  return {
    rule: STRANDED_RULE,
    severity: 'critical',
    subject: strandedSubject(entry),
    message: `${what} by ${entry.ownerKind} ${entry.owner} (run ${entry.runId}${request}) since ${entry.pausedAt ?? entry.intendedAt}, and owned by nobody: nothing hands it back. \`nightshift adopt ${entry.owner}\` makes it ${entry.owner}'s again`,
  };
}
