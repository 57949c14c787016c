import { describe, expect, it } from 'vitest';
import { partRefusal, splitTargets } from '../../../src/engine/index.js';
import { runSummary } from '../../helpers/summaries.js';

const keys = (count: number) => Array.from({ length: count }, (_, i) => `wg/ws${i}`);

describe('splitTargets', () => {
  it('cuts the targets into parts of the size, the last holding the rest, numbered from 0', () => {
    const parts = splitTargets(keys(45), 20);
    expect(parts.map((part) => part.index)).toEqual([0, 1, 2]);
    expect(parts.map((part) => part.keys.length)).toEqual([20, 20, 5]);
  });

  it('keeps every target exactly once, in order', () => {
    expect(splitTargets(keys(1001), 100).flatMap((part) => part.keys)).toEqual(keys(1001));
  });

  it('makes one part when the targets fit in one, and none for no target', () => {
    expect(splitTargets(keys(20), 20)).toEqual([{ index: 0, keys: keys(20) }]);
    expect(splitTargets([], 20)).toEqual([]);
  });

  it('refuses a part size that is not a positive whole number', () => {
    expect(() => splitTargets(keys(3), 0)).toThrow(/positive integer, got 0/);
    expect(() => splitTargets(keys(3), 2.5)).toThrow(/positive integer, got 2.5/);
  });
});

describe('partRefusal', () => {
  const part = { index: 1, keys: keys(3) };

  it("gives the summary's reason when an execution of a part worked none of its targets (its listing gone…)", () => {
    const refused = runSummary({
      succeeded: 0,
      outcome: 'failed',
      reason: 'the fleet listing its run stored for its parts is gone',
    });
    expect(partRefusal(refused, part)).toBe('the fleet listing its run stored for its parts is gone');
    expect(partRefusal(runSummary({ succeeded: 0, outcome: 'failed' }), part)).toBe(
      'the part worked none of its targets',
    );
  });

  it('is undefined when the part worked some of its targets, even all failed, or had none to work', () => {
    expect(partRefusal(runSummary({ succeeded: 0, failed: 3 }), part)).toBeUndefined();
    expect(partRefusal(runSummary({ succeeded: 0 }), { index: 2, keys: [] })).toBeUndefined();
  });
});
