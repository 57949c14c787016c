import { describe, expect, it } from 'vitest';
import {
  formatPolicyNotice,
  MAX_PAYLOAD_PROBLEMS,
  type PolicyNotice,
  policyJsonPayload,
  policySlackPayload,
} from '../../../src/notify/index.js';

const IN_FORCE = 'a'.repeat(64);
const REJECTED = 'b'.repeat(64);

function notice(overrides: Partial<PolicyNotice> = {}): PolicyNotice {
  return {
    event: 'rejected',
    file: '/config/policy.yaml',
    policySha: IN_FORCE,
    rejectedSha: REJECTED,
    problems: [
      { file: '/config/policy.yaml', line: 9, col: 15, message: 'jobs.alpha.schedule: invalid cron <61>' },
    ],
    at: '2026-11-25T09:00:00.000Z',
    ...overrides,
  };
}

describe('policy notices', () => {
  it('json: every key present, problems as file, line, col and message, capped with a complete count', () => {
    expect(policyJsonPayload(notice())).toEqual({
      kind: 'nightshift.policy',
      version: 1,
      event: 'rejected',
      file: '/config/policy.yaml',
      policySha: IN_FORCE,
      rejectedSha: REJECTED,
      problemCount: 1,
      problems: [
        { file: '/config/policy.yaml', line: 9, col: 15, message: 'jobs.alpha.schedule: invalid cron <61>' },
      ],
      at: '2026-11-25T09:00:00.000Z',
    });
    const many = Array.from({ length: MAX_PAYLOAD_PROBLEMS + 5 }, (_, line) => ({
      file: 'p.yaml',
      line: line + 1,
      col: 1,
      message: 'bad',
    }));
    const capped = policyJsonPayload(notice({ problems: many }));
    expect(capped.problems).toHaveLength(MAX_PAYLOAD_PROBLEMS);
    expect(capped.problemCount).toBe(MAX_PAYLOAD_PROBLEMS + 5);
  });

  it('slack: says what was rejected and what still runs, lists the problems escaped, and the fix in one line', () => {
    const rejected = policySlackPayload(notice());
    expect(rejected.text).toBe(
      `nightshift: policy edit rejected: \`/config/policy.yaml\` has 1 problem; still running policy \`${IN_FORCE.slice(0, 12)}\``,
    );
    expect(JSON.stringify(rejected.blocks)).toContain(
      '/config/policy.yaml:9:15: jobs.alpha.schedule: invalid cron &lt;61&gt;',
    );
    const accepted = formatPolicyNotice('slack', notice({ event: 'accepted', problems: [] }));
    expect(accepted).toMatchObject({
      text: `nightshift: policy reloaded: \`/config/policy.yaml\` is in force again (policy \`${IN_FORCE.slice(0, 12)}\`)`,
    });
    expect(JSON.stringify(accepted)).not.toContain('Problems');
    expect(formatPolicyNotice('json', notice())).toMatchObject({ kind: 'nightshift.policy' });
  });
});
