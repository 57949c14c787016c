import { describe, expect, it } from 'vitest';
import { type RunProgress, throttledProgress } from '../../../src/queue/progress.js';

describe('throttledProgress', () => {
  it('reports at most once per 250 ms, but always the last target', () => {
    let clock = 1_000;
    const reports: RunProgress[] = [];
    const report = throttledProgress(
      async (progress) => void reports.push(progress),
      () => clock,
    );
    report(1, 4);
    clock += 100;
    report(2, 4);
    clock += 200;
    report(3, 4);
    clock += 1;
    report(4, 4);
    expect(reports).toEqual([
      { done: 1, total: 4 },
      { done: 3, total: 4 },
      { done: 4, total: 4 },
    ]);
  });

  it('drops a report that fails to write instead of failing the run, and still sends the next', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const writes: RunProgress[] = [];
      let clock = 1_000;
      const report = throttledProgress(
        (progress) => {
          writes.push(progress);
          return writes.length === 1 ? Promise.reject(new Error('Redis gone')) : Promise.resolve();
        },
        () => clock,
      );
      report(1, 2);
      clock += 250;
      report(2, 2);
      await new Promise((resolve) => setImmediate(resolve));
      expect(writes).toEqual([
        { done: 1, total: 2 },
        { done: 2, total: 2 },
      ]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
