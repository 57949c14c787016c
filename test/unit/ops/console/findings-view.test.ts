import { describe, expect, it } from 'vitest';
import { renderFindings } from '../../../../src/ops/console/views/index.js';
import { ctx, findingsView, HOSTILE } from './view-models.js';

describe('the findings page', () => {
  it('lists each open finding with severity in words, job, rule, subject and message', () => {
    const page = renderFindings(findingsView(), ctx);
    expect(page).toContain('<span class="badge sev-critical">critical</span>');
    expect(page).toContain('<td>audit-users</td>');
    expect(page).toContain('<code>no-stale-admins</code>');
    expect(page).toContain('admin without login for 120 days');
  });

  it('says since when a finding is open, in days once it is a day old, and links the run that last reported it', () => {
    const page = renderFindings(findingsView(), ctx);
    expect(page).toContain('for 5 days');
    expect(page).toContain('for 8 h');
    expect(page).toContain('href="/runs/audit-users%3A2026-11-25T06%3A00%3A00.000Z"');
  });

  it('escapes a subject that comes from the API', () => {
    const page = renderFindings(findingsView(), ctx);
    expect(page).not.toContain(HOSTILE);
    expect(page).toContain('<td>&lt;script&gt;');
  });

  it('says there is none when no audit reports one', () => {
    expect(renderFindings(findingsView({ findings: [] }), ctx)).toContain('No open finding');
  });
});
