import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/index.js';
import { MemoryCheckpointStore, type StepResult } from '../../../src/engine/index.js';
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
});
