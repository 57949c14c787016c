import { describe, expect, it } from 'vitest';
import { describeSuspension } from '../../../src/store/suspensions.js';

describe('describeSuspension', () => {
  it('says since when a job is suspended, and why when a reason was given', () => {
    const since = '2026-03-27T20:00:00.000Z';
    expect(describeSuspension({ job: 'nightly', since, reason: 'incident 42', by: 'ana' })).toBe(
      `suspended since ${since} (incident 42)`,
    );
    expect(describeSuspension({ job: 'nightly', since })).toBe(`suspended since ${since}`);
  });
});
