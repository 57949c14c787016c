import { describe, expect, it, vi } from 'vitest';
import { MemoryCheckpointStore, type RunSummary, type TargetRecord } from '../../../src/engine/index.js';
import { silentLogger } from '../../../src/log/logger.js';
import type { PolicyCache } from '../../../src/queue/policy-cache.js';
import type { RunDelivery, RunJobData } from '../../../src/queue/run-queue.js';
import { RunRecorder } from '../../../src/queue/run-recorder.js';
import type { FindingsLedger, RunHistory, RunLock } from '../../../src/store/index.js';
import { FakeClock } from '../../helpers/clock.js';

const NOW = new Date('2026-11-27T02:00:05Z');

/** A recorder over in-memory stand-ins, its clock at NOW; `recorded` is an existing history entry. */
function recorder(recorded?: RunSummary) {
  const kept: RunSummary[] = [];
  const history = {
    record: vi.fn(async (summary: RunSummary) => void kept.push(summary)),
    get: vi.fn(async () => recorded),
  } as unknown as RunHistory;
  const findings = { record: vi.fn(async () => undefined) } as unknown as FindingsLedger;
  const lock = { release: vi.fn(async () => undefined) };
  const checkpoints = new MemoryCheckpointStore();
  const runFinished = vi.fn();
  const runRecorder = new RunRecorder({
    history,
    findings,
    checkpoints,
    policies: { find: async () => undefined } as unknown as PolicyCache,
    lock: lock as unknown as RunLock,
    metrics: { runFinished, policyRefused: vi.fn() },
    log: silentLogger,
    clock: new FakeClock(NOW.getTime()),
  });
  return { runRecorder, kept, lock, checkpoints, runFinished };
}

const data: RunJobData = {
  runId: 'nightly@2026-11-27T02:00:00.000Z',
  job: 'nightly',
  policySha: 'abc',
  trigger: 'schedule',
  scheduledAt: '2026-11-27T02:00:00.000Z',
  dryRun: false,
};

const target: TargetRecord = {
  key: 'wg-1/ws-1',
  outcome: 'succeeded',
  attempts: 1,
  requestIds: ['req-1'],
  durationMs: 12,
};

describe('RunRecorder', () => {
  it("records a skipped run at the worker's clock, and counts it", async () => {
    const { runRecorder, kept, runFinished } = recorder();
    const summary = await runRecorder.skipped(
      { runId: data.runId, job: 'nightly', action: 'pause', trigger: 'schedule', dryRun: false },
      'skipped: suspended since 2026-11-26T20:00:00.000Z',
    );
    expect(summary).toMatchObject({
      outcome: 'skipped',
      startedAt: NOW.toISOString(),
      finishedAt: NOW.toISOString(),
    });
    expect(kept).toEqual([summary]);
    expect(runFinished).toHaveBeenCalledWith(summary);
  });

  it('records a run BullMQ failed with the targets its checkpoints hold, releases its job lock and forgets its checkpoints', async () => {
    const { runRecorder, kept, lock, checkpoints } = recorder();
    await checkpoints.save(data.runId, target);
    const delivery = {
      data,
      deferredFailure: 'stalled too often',
      processedOn: Date.parse('2026-11-27T02:00:00.100Z'),
      timestamp: Date.parse('2026-11-27T01:59:58Z'),
      attemptsStarted: 6,
    } as unknown as RunDelivery;
    await runRecorder.failed(delivery, new Error('job stalled more than allowable limit'));
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({
      outcome: 'failed',
      startedAt: '2026-11-27T02:00:00.100Z',
      finishedAt: NOW.toISOString(),
      deliveries: 5,
    });
    expect(kept[0]?.reason).toMatch(/^abandoned: a worker stopped while running it, 5 times/);
    expect(kept[0]?.targets.map((record) => record.key)).toEqual(['wg-1/ws-1']);
    expect(lock.release).toHaveBeenCalledWith('nightly', data.runId);
    expect(await checkpoints.count(data.runId)).toBe(0);
  });

  it('records nothing for a failed delivery whose run an earlier execution already recorded', async () => {
    const { runRecorder, kept, lock } = recorder({ runId: data.runId } as RunSummary);
    await runRecorder.failed({ data } as unknown as RunDelivery, new Error('Missing lock for job'));
    expect(kept).toEqual([]);
    expect(lock.release).not.toHaveBeenCalled();
  });
});
