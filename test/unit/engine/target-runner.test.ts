import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/index.js';
import { MemoryCheckpointStore, RunCancelledError, type StepResult } from '../../../src/engine/index.js';
import type { Finding } from '../../../src/engine/summary.js';
import { runTargets } from '../../../src/engine/target-runner.js';
import { silentLogger } from '../../../src/log/logger.js';
import { instantClock } from '../../helpers/clock.js';

const finding = (subject: string, attempt: number): Finding => ({
  rule: 'test/seen',
  severity: 'warning',
  subject,
  message: `seen on attempt ${attempt}`,
});

const unavailable = () =>
  new ApiError({
    operation: 'listAllowedIps',
    method: 'GET',
    path: '/controller/v4/v2/workgroups/wg-a/allow_list',
    status: 503,
    type: 'Unavailable',
    reason: 'try again',
  });

describe('runTargets', () => {
  it("keeps the findings a target's step returns with its record, and none of an attempt that failed", async () => {
    const checkpoints = new MemoryCheckpointStore();
    const records = await runTargets(
      {
        runId: 'audit@1',
        concurrency: 2,
        retry: { attempts: 3, backoff: 10, strategy: 'fixed' },
        clock: instantClock(),
        checkpoints,
        done: new Map(),
        log: silentLogger,
        signal: new AbortController().signal,
        onRecord: () => undefined,
      },
      ['wg-a', 'wg-b'],
      (key) => ({ key }),
      async (key, { attempt }): Promise<StepResult> => {
        // wg-a's first attempt fails before it has a result: nothing it saw is reported
        if (key === 'wg-a' && attempt === 1) throw unavailable();
        return { outcome: 'succeeded', findings: [finding(key, attempt)] };
      },
    );
    const byKey = new Map(records.map((record) => [record.key, record]));
    expect(byKey.get('wg-a')?.findings).toEqual([finding('wg-a', 2)]);
    expect(byKey.get('wg-b')?.findings).toEqual([finding('wg-b', 1)]);
    // checkpointed with the record: a run taken over still sees them
    expect((await checkpoints.load('audit@1')).get('wg-a')?.findings).toEqual([finding('wg-a', 2)]);
  });

  it('starts no target once the run is halted: those under way finish and are checkpointed, then it throws the halt', async () => {
    const checkpoints = new MemoryCheckpointStore();
    const halt = new AbortController();
    const cancelled = new RunCancelledError({ by: 'ana', at: '2026-11-27T02:00:00.000Z' });
    const started: string[] = [];
    const running = runTargets(
      {
        runId: 'pause@1',
        concurrency: 2,
        retry: { attempts: 1, backoff: 10, strategy: 'fixed' },
        clock: instantClock(),
        checkpoints,
        done: new Map(),
        log: silentLogger,
        signal: new AbortController().signal,
        halt: halt.signal,
        onRecord: () => undefined,
      },
      ['ws-1', 'ws-2', 'ws-3', 'ws-4', 'ws-5'],
      (key) => ({ key }),
      async (key): Promise<StepResult> => {
        started.push(key);
        // the cancel arrives while the first two are under way
        if (key === 'ws-2') halt.abort(cancelled);
        await new Promise((resolve) => setImmediate(resolve));
        return { outcome: 'succeeded' };
      },
    );
    await expect(running).rejects.toBe(cancelled);
    expect(started).toEqual(['ws-1', 'ws-2']);
    expect([...(await checkpoints.load('pause@1')).keys()].sort()).toEqual(['ws-1', 'ws-2']);
  });

  it('ends normally when the halt comes after every target has started: nothing was left undone', async () => {
    const halt = new AbortController();
    const records = await runTargets(
      {
        runId: 'pause@2',
        concurrency: 2,
        retry: { attempts: 1, backoff: 10, strategy: 'fixed' },
        clock: instantClock(),
        checkpoints: new MemoryCheckpointStore(),
        done: new Map(),
        log: silentLogger,
        signal: new AbortController().signal,
        halt: halt.signal,
        onRecord: () => undefined,
      },
      ['ws-1', 'ws-2'],
      (key) => ({ key }),
      async (key): Promise<StepResult> => {
        if (key === 'ws-2') halt.abort(new RunCancelledError({ by: 'ana', at: '2026-11-27T02:00:00.000Z' }));
        return { outcome: 'succeeded' };
      },
    );
    expect(records.map((record) => record.key).sort()).toEqual(['ws-1', 'ws-2']);
  });
});
