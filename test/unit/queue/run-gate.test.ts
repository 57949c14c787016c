import { describe, expect, it, vi } from 'vitest';
import { type SequencedListings, TickGate } from '../../../src/engine/index.js';
import type { PolicyJob } from '../../../src/policy/index.js';
import { RunGate } from '../../../src/queue/run-gate.js';
import type { RunJobData } from '../../../src/queue/run-queue.js';
import type { RunLock } from '../../../src/store/index.js';
import type { LockAdmission } from '../../../src/store/run-lock.js';
import { FakeClock } from '../../helpers/clock.js';

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
    ticks: new TickGate({ clock: new FakeClock(NOW), signal: new AbortController().signal }),
    lock,
    checkSuspensions: true,
    worker: 'host:1',
    clock: new FakeClock(NOW),
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

/** The job's run lock as Redis keeps it: one holder at a time for exclusive runs; `allow` takes none. */
class MemoryRunLock {
  holder: string | undefined;

  async admit(_job: string, runId: string, { exclusive }: { exclusive: boolean }): Promise<LockAdmission> {
    if (!exclusive) return { verdict: 'admitted' };
    if (this.holder !== undefined && this.holder !== runId) return { verdict: 'locked', holder: this.holder };
    this.holder = runId;
    return { verdict: 'admitted' };
  }
}

describe('RunGate on a fake clock: ticks and overlap', () => {
  const tick = (offsetMs: number): RunJobData => {
    const at = new Date(NOW + offsetMs).toISOString();
    return { ...data, runId: `nightly@${at}`, scheduledAt: at };
  };

  function overlapGate(overlap: PolicyJob['overlap']) {
    const clock = new FakeClock(NOW - 2_000);
    const lock = new MemoryRunLock();
    const runGate = new RunGate({
      ticks: new TickGate({ clock, signal: new AbortController().signal }),
      lock,
      worker: 'host:1',
      clock,
    });
    return { clock, lock, runGate, job: { name: 'nightly', overlap } as PolicyJob };
  }

  it('holds a run handed over ahead of its tick until the tick, and starts it at the tick', async () => {
    const { clock, runGate, job } = overlapGate('skip');
    let admission: Awaited<ReturnType<RunGate['admit']>> | undefined;
    void runGate.admit(tick(0), job).then((found) => {
      admission = found;
    });
    await clock.advance(1_999);
    expect(admission).toBeUndefined();
    await clock.advance(1);
    expect(admission).toMatchObject({ verdict: 'start', startedAt: new Date(NOW) });
  });

  it('skip (the default): a tick while the previous run is still going is skipped, naming that run', async () => {
    const { clock, lock, runGate, job } = overlapGate('skip');
    await clock.advance(2_000);
    expect(await runGate.admit(tick(0), job)).toMatchObject({ verdict: 'start', exclusive: true });
    const during = runGate.admit(tick(1_000), job);
    await clock.advance(1_000);
    expect(await during).toEqual({
      verdict: 'skip',
      reason: `skipped: the previous run (${tick(0).runId}) is still running`,
      message: 'run skipped: previous run still running',
    });
    lock.holder = undefined;
    const after = runGate.admit(tick(3_000), job);
    await clock.advance(2_000);
    expect(await after).toMatchObject({ verdict: 'start' });
  });

  it('queue: a tick while the previous run is still going waits its turn', async () => {
    const { clock, runGate, job } = overlapGate('queue');
    await clock.advance(2_000);
    await runGate.admit(tick(0), job);
    const during = runGate.admit(tick(1_000), job);
    await clock.advance(1_000);
    expect(await during).toEqual({ verdict: 'wait turn' });
  });

  it('allow: a tick while the previous run is still going starts beside it, holding no lock', async () => {
    const { clock, lock, runGate, job } = overlapGate('allow');
    await clock.advance(2_000);
    await runGate.admit(tick(0), job);
    const during = runGate.admit(tick(1_000), job);
    await clock.advance(1_000);
    expect(await during).toMatchObject({ verdict: 'start', exclusive: false });
    expect(lock.holder).toBeUndefined();
  });
});
