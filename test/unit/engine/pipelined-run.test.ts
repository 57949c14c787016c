import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type ApiClient, ApiError, type Workgroup } from '../../../src/api/index.js';
import {
  executeRun,
  MemoryCheckpointStore,
  type RunDependencies,
  workspaceRef,
} from '../../../src/engine/index.js';
import { silentLogger } from '../../../src/log/logger.js';
import { createActionCatalog, parsePolicy } from '../../../src/policy/index.js';
import { activeWorkgroup } from '../../helpers/active-workgroup.js';
import { instantClock } from '../../helpers/clock.js';
import { testAction } from '../../helpers/test-action.js';

/**
 * A pipelined step (a pause: Redis writes around one call) works more targets at once than the
 * run has calls in flight; `concurrency` bounds the calls either way.
 */
const fleet: Workgroup[] = [activeWorkgroup(Array.from({ length: 12 }, (_, i) => `ws-${i}`))];

/** Highest count seen of things under way at once. */
class Peak {
  now = 0;
  max = 0;
  async during<T>(work: () => Promise<T>): Promise<T> {
    this.now += 1;
    this.max = Math.max(this.max, this.now);
    try {
      return await work();
    } finally {
      this.now -= 1;
    }
  }
}

/**
 * An action whose step writes (a short wait), makes `callsPerTarget` calls at once, and writes
 * again; with the peaks of targets and of calls under way.
 */
function pausing(pipelined: boolean, callsPerTarget = 1) {
  const targets = new Peak();
  const calls = new Peak();
  const action = testAction('touch', async (ctx) => {
    await ctx.forEachTarget(
      ctx.workspaces,
      workspaceRef,
      (ws) =>
        targets.during(async () => {
          await sleep(2);
          await Promise.all(
            Array.from({ length: callsPerTarget }, () =>
              ctx.api.pauseWorkspace(ws.workgroupId, ws.workspaceId),
            ),
          );
          await sleep(2);
          return { outcome: 'succeeded' };
        }),
      { pipelined },
    );
  });
  const api = {
    listWorkgroups: async () => ({ result: fleet, requestId: 'req-list' }),
    pauseWorkspace: () => calls.during(() => sleep(5).then(() => ({ result: 'ok', requestId: 'req-pause' }))),
  } as unknown as ApiClient;
  return { action, api, targets, calls };
}

function run({ action, api }: ReturnType<typeof pausing>, extra = '', concurrency = 2) {
  const policy = parsePolicy(
    `version: 1
jobs:
  touch-all:
    schedule: "0 20 * * *"
    action: touch
    target: { workgroups: ["*"] }
    concurrency: ${concurrency}
${extra}`,
    'test.yaml',
    { registry: createActionCatalog([action]), env: {} },
  );
  const deps: RunDependencies = {
    api,
    io: { files: {} as never, secretSinks: {} as never },
    actions: new Map([[action.name, action]]),
    checkpoints: new MemoryCheckpointStore(),
    log: silentLogger,
    signal: new AbortController().signal,
    pollIntervalMs: 1_000,
    clock: instantClock(),
  };
  const job = policy.jobs[0] as (typeof policy.jobs)[number];
  return executeRun(deps, { runId: 'touch-all@1', job, trigger: 'manual', dryRun: false });
}

describe('a pipelined run', () => {
  it('works twice its concurrency in targets at once and never has more calls in flight than its concurrency', async () => {
    const probe = pausing(true);
    const summary = await run(probe);
    expect(summary.counts).toMatchObject({ total: 12, succeeded: 12 });
    expect(probe.targets.max).toBe(4);
    expect(probe.calls.max).toBe(2);
  });

  it('with a failure budget works no more targets at once than its concurrency, so few are under way when it stops', async () => {
    const probe = pausing(true);
    const summary = await run(probe, '    stopAfter: { failures: 3 }\n');
    expect(summary.counts).toMatchObject({ total: 12, succeeded: 12 });
    expect(probe.targets.max).toBe(2);
  });
});

describe('a pipelined target whose call the API throttled', () => {
  it('keeps its call slot while it waits to try again: no other call goes in its place', async () => {
    const probe = pausing(true);
    const events: string[] = [];
    let throttled = false;
    const api = probe.api as unknown as Record<string, unknown>;
    const pause = api.pauseWorkspace as (wg: string, ws: string) => Promise<unknown>;
    api.pauseWorkspace = async (wg: string, ws: string) => {
      events.push(`call ${ws}`);
      if (ws === 'ws-0' && !throttled) {
        throttled = true;
        // answered once the next target waits for the slot
        await sleep(10);
        throw new ApiError({
          operation: 'pauseWorkspace',
          method: 'POST',
          path: `/workgroups/${wg}/workspaces/${ws}/pause`,
          status: 429,
          type: 'Too-Many-Requests',
          reason: 'slow down',
          retryAfterMs: 50,
        });
      }
      return pause(wg, ws);
    };
    const summary = await run(probe, '    retry: { attempts: 3, backoff: 1s }\n', 1);
    expect(summary.counts).toMatchObject({ total: 12, succeeded: 12 });
    // ws-0's second try is the next call after its first: nothing took its slot meanwhile
    expect(events.slice(0, 2)).toEqual(['call ws-0', 'call ws-0']);
    expect(probe.calls.max).toBe(1);
  });
});

describe('a run that is not pipelined', () => {
  it("holds a call slot for each target's whole step, so a step's own calls at once never wait for one", async () => {
    const probe = pausing(false, 3);
    const summary = await run(probe);
    expect(summary.counts).toMatchObject({ total: 12, succeeded: 12 });
    expect(probe.targets.max).toBe(2);
    expect(probe.calls.max).toBe(6);
  });
});
