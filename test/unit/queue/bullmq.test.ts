import * as Package from 'bullmq';
import { describe, expect, it } from 'vitest';
import { BullMQ } from '../../../src/queue/bullmq.js';

describe('the BullMQ classes required from their own modules', () => {
  it('are the very classes the package exports, so instanceof holds across both ways in', () => {
    expect(BullMQ.Queue).toBe(Package.Queue);
    expect(BullMQ.Worker).toBe(Package.Worker);
    expect(BullMQ.DelayedError).toBe(Package.DelayedError);
    expect(BullMQ.UnrecoverableError).toBe(Package.UnrecoverableError);
    expect(BullMQ.WaitingError).toBe(Package.WaitingError);
    expect(new BullMQ.UnrecoverableError('x')).toBeInstanceOf(Package.UnrecoverableError);
  });
});
