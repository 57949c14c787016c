import { describe, expect, it, vi } from 'vitest';
import { type SequencedListings, TickGate } from '../../../src/engine/index.js';
import type { PolicyJob } from '../../../src/policy/index.js';
import { RunGate } from '../../../src/queue/run-gate.js';
import type { RunJobData } from '../../../src/queue/run-queue.js';
import type { RunLock } from '../../../src/store/index.js';
import type { LockAdmission } from '../../../src/store/run-lock.js';

const NOW = Date.parse('2026-11-27T02:00:00Z');

const data: RunJobData = {
  runId: 'nightly@2026-11-27T02:00:00.000Z',
  job: 'nightly',
  policySha: 'abc',
  trigger: 'schedule',
  scheduledAt: new Date(NOW).toISOString(),
  dryRun: false,
};

/** A gate whose lock answers `found`, whose listings are counted and never answered. */
function gate(found: LockAdmission, overlap: PolicyJob['overlap'] = 'skip') {
  const lock = { admit: vi.fn(async () => found) } as unknown as RunLock;
  const sequenced = vi.fn<SequencedListings['sequenced']>(() => new Promise(() => undefined));
  const runGate = new RunGate({
    ticks: new TickGate({ now: () => NOW, signal: new AbortController().signal }),
    lock,
    checkSuspensions: true,
    worker: 'host:1',
    now: () => NOW,
    listings: { sequenced },
  });
  return { runGate, sequenced, job: { name: 'nightly', overlap } as PolicyJob };
}

describe('RunGate', () => {
  it("asks for an admitted run's fleet listing as it admits it, ordered after the ledger sequence its admission read", async () => {
    const { runGate, sequenced, job } = gate({ verdict: 'admitted', seq: 7 });
    const admission = await runGate.admit(data, job, { permit: () => undefined });
    // started at the worker's clock's time, which its ticks are waited for by
    expect(admission).toMatchObject({ verdict: 'start', exclusive: true, startedAt: new Date(NOW) });
    expect(admission.verdict === 'start' && admission.listing).toBeTruthy();
    expect(sequenced).toHaveBeenCalledTimes(1);
    expect(sequenced.mock.calls[0]?.[1]).toEqual({ seq: 7, prompt: true });
  });

  it('asks for no listing for a run it skips or sends to wait its turn', async () => {
    const suspended = gate({
      verdict: 'suspended',
      suspension: { job: 'nightly', since: new Date(NOW).toISOString() },
    });
    expect((await suspended.runGate.admit(data, suspended.job)).verdict).toBe('skip');
    const locked = gate({ verdict: 'locked', holder: 'nightly@earlier' }, 'queue');
    expect((await locked.runGate.admit(data, locked.job)).verdict).toBe('wait turn');
    expect(suspended.sequenced).not.toHaveBeenCalled();
    expect(locked.sequenced).not.toHaveBeenCalled();
  });

  it('asks for no listing once the execution may no longer call the API: the run finds its lease lost itself', async () => {
    const { runGate, sequenced, job } = gate({ verdict: 'admitted', seq: 7 });
    const admission = await runGate.admit(data, job, {
      permit: () => {
        throw new Error('lease expired');
      },
    });
    expect(admission).toMatchObject({ verdict: 'start', listing: undefined });
    expect(sequenced).not.toHaveBeenCalled();
  });
});
