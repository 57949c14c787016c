import { describe, expect, it } from 'vitest';
import { exceptionEnd, holdForm, holdFromForm } from '../../../src/ops/console/data/holds.js';

const NOW = new Date('2026-11-27T10:00:00Z');
const form = (fields: Record<string, string>) =>
  holdForm({ pattern: 'dev-*/*', state: 'active', for: '2h', reason: 'demo', ...fields });

describe("the console's hold form", () => {
  it('makes the hold the CLI would: by the principal, until now plus the duration or the instant given', () => {
    expect(holdFromForm(form({}), 'otto', NOW)).toEqual({
      pattern: 'dev-*/*',
      state: 'active',
      until: '2026-11-27T12:00:00.000Z',
      reason: 'demo',
      by: 'otto',
      createdAt: NOW.toISOString(),
    });
    expect(holdFromForm(form({ for: '', until: '2026-12-01T08:00:00Z' }), 'otto', NOW)).toMatchObject({
      until: '2026-12-01T08:00:00.000Z',
    });
  });

  it('says what is wrong instead: no pattern, a bad one, an unknown state, no end or two, a past end, no reason', () => {
    expect(holdFromForm(form({ pattern: '' }), 'otto', NOW)).toMatch(/name the workspaces/);
    expect(holdFromForm(form({ pattern: 'no-slash' }), 'otto', NOW)).toEqual(expect.any(String));
    expect(holdFromForm(form({ state: 'paused' }), 'otto', NOW)).toBe(
      'the state must be one of active, stopped',
    );
    expect(holdFromForm(form({ for: '' }), 'otto', NOW)).toMatch(/how long/);
    expect(holdFromForm(form({ until: '2026-12-01T08:00:00Z' }), 'otto', NOW)).toMatch(/not both/);
    expect(holdFromForm(form({ for: '', until: '2026-01-01T00:00:00Z' }), 'otto', NOW)).toMatch(
      /in the past/,
    );
    expect(holdFromForm(form({ for: '400d' }), 'otto', NOW)).toMatch(/at most 366d/);
    expect(holdFromForm(form({ reason: ' ' }), 'otto', NOW)).toMatch(/say why/);
  });

  it('takes no end as "until unsuspended" where one is optional (a suspension)', () => {
    expect(exceptionEnd({ for: '', until: '' }, NOW, false)).toBeUndefined();
    expect(exceptionEnd({ for: 'soon', until: '' }, NOW, false)).toMatch(/not a duration/);
  });
});
