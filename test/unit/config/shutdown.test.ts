import { describe, expect, it } from 'vitest';
import { loadSettings, SHUTDOWN_LIMIT_MS, shutdownBudget } from '../../../src/config/index.js';

const withGrace = (ms: number) => loadSettings({ NIGHTSHIFT_SHUTDOWN_GRACE_MS: String(ms) });

describe('shutdownBudget', () => {
  it('gives runs in flight the configured grace while Redis is up, and the process that plus hand-back and the rest of the shutdown', () => {
    expect(shutdownBudget(withGrace(5_000), { ready: true })).toEqual({ graceMs: 5_000, limitMs: 14_000 });
    expect(shutdownBudget(withGrace(30_000), { ready: true })).toEqual({ graceMs: 30_000, limitMs: 39_000 });
  });

  it('never allows a service less than the shared limit, which stays inside the 15 s an operator counts on', () => {
    expect(shutdownBudget(withGrace(1_000), { ready: true }).limitMs).toBe(SHUTDOWN_LIMIT_MS);
    expect(SHUTDOWN_LIMIT_MS).toBeLessThan(15_000);
  });

  it('cuts the grace to 3 s while Redis is unreachable: progress cannot be checkpointed, so waiting longer only delays the exit', () => {
    expect(shutdownBudget(withGrace(30_000), { ready: false })).toEqual({
      graceMs: 3_000,
      limitMs: SHUTDOWN_LIMIT_MS,
    });
    expect(shutdownBudget(withGrace(1_000), { ready: false }).graceMs).toBe(1_000);
  });
});
