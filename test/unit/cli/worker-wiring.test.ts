import { describe, expect, it } from 'vitest';
import { resolveWorkerOptions } from '../../../src/cli/worker-wiring.js';
import {
  DEFAULT_LOCK_MS,
  DEFAULT_MAX_STALLS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_RUN_PART_SIZE,
  DEFAULT_WORKER_CONCURRENCY,
} from '../../../src/config/index.js';
import { loadSettings } from '../../../src/config/settings.js';

describe('resolveWorkerOptions', () => {
  it("gives a worker the Settings' concurrency, poll interval, claim, stall limit and part size", () => {
    const settings = loadSettings({
      NIGHTSHIFT_WORKER_CONCURRENCY: '7',
      NIGHTSHIFT_POLL_INTERVAL_MS: '1500',
      NIGHTSHIFT_LOCK_MS: '12000',
      NIGHTSHIFT_MAX_STALLS: '2',
      NIGHTSHIFT_RUN_PART_SIZE: '250',
    });
    expect(resolveWorkerOptions(settings)).toEqual({
      concurrency: 7,
      pollIntervalMs: 1500,
      lockDurationMs: 12_000,
      maxStalledCount: 2,
      partSize: 250,
    });
  });

  it('gives the documented defaults when nothing is set', () => {
    expect(resolveWorkerOptions(loadSettings({}))).toEqual({
      concurrency: DEFAULT_WORKER_CONCURRENCY,
      pollIntervalMs: DEFAULT_POLL_INTERVAL_MS,
      lockDurationMs: DEFAULT_LOCK_MS,
      maxStalledCount: DEFAULT_MAX_STALLS,
      partSize: DEFAULT_RUN_PART_SIZE,
    });
  });
});
