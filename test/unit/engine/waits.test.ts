import { describe, expect, it } from 'vitest';
import { type ApiClient, ApiError, type Workgroup } from '../../../src/api/index.js';
import { FleetView, WaitTimeoutError } from '../../../src/engine/fleet.js';
import { AttemptsFailedError, FailedLooks, waitForState, withRetries } from '../../../src/engine/retry.js';
import { silentLogger } from '../../../src/log/logger.js';
import { instantClock } from '../../helpers/clock.js';

const policy = { attempts: 3, backoff: 1_000, strategy: 'fixed' as const };
const apiError = (status: number, type: string, retryAfterMs?: number) =>
  new ApiError({ operation: 'op', method: 'GET', path: '/', status, type, reason: 'x', retryAfterMs });
const transient = () => apiError(503, 'Service-Unavailable');
const throttled = (retryAfterMs?: number) => apiError(429, 'Quota-Exceed', retryAfterMs);
const signal = new AbortController().signal;

describe('FailedLooks: the rule for a wait whose look failed', () => {
  it.each([
    [401, 'Unauthorized'],
    [403, 'Forbidden'],
    [404, 'Not-Found'],
    [400, 'Bad-Request'],
    [403, 'API-Disabled'],
  ])('ends the wait at once with a permanent %i %s', (status, type) => {
    const error = apiError(status, type);
    expect(() => new FailedLooks(policy, 50).failed(error)).toThrow(error);
  });

  it('ends the wait at once with an error that is not the API’s', () => {
    const error = new TypeError('bad answer');
    expect(() => new FailedLooks(policy, 50).failed(error)).toThrow(error);
  });

  it('looks past transient failures, waiting the policy’s backoff, until the policy’s attempts failed in a row', () => {
    const looks = new FailedLooks(policy, 50);
    for (let failed = 1; failed < policy.attempts; failed++) {
      const delay = looks.failed(transient());
      expect(delay).toBeGreaterThanOrEqual(500);
      expect(delay).toBeLessThanOrEqual(1_000);
    }
    const last = (() => {
      try {
        looks.failed(transient());
      } catch (error) {
        return error;
      }
    })();
    expect(last).toBeInstanceOf(AttemptsFailedError);
    expect(last).toMatchObject({ attempts: policy.attempts });
  });

  it('starts the count again after a look that worked', () => {
    const looks = new FailedLooks(policy, 50);
    for (let round = 0; round < 5; round++) {
      looks.failed(transient());
      looks.failed(transient());
      looks.succeeded();
    }
    expect(() => looks.failed(transient())).not.toThrow();
  });

  it('does not count a throttled look, and waits at least its Retry-After and the poll interval', () => {
    const looks = new FailedLooks(policy, 50);
    for (let i = 0; i < 10; i++) expect(looks.failed(throttled(2_000))).toBe(2_000);
    expect(looks.failed(throttled(10))).toBe(50);
    expect(() => looks.failed(transient())).not.toThrow();
  });
});

describe('waitForState', () => {
  const base = {
    policy,
    signal,
    intervalMs: 1_000,
    timeoutMs: 60_000,
    timedOut: () => new WaitTimeoutError('ran out'),
  };

  it('looks every interval until the state is reached, on the injected clock (no real waiting)', async () => {
    const clock = instantClock();
    let looks = 0;
    const value = await waitForState({ ...base, clock, look: async () => ++looks, reached: (n) => n === 5 });
    expect(value).toBe(5);
    expect(clock.elapsedMs()).toBe(5_000);
  });

  it('ends with `timedOut` of the last state seen once the deadline passes', async () => {
    const clock = instantClock();
    const seen: (number | undefined)[] = [];
    const error = await waitForState({
      ...base,
      clock,
      look: async () => 7,
      reached: () => false,
      timedOut: (last) => {
        seen.push(last);
        return new WaitTimeoutError('ran out');
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(seen).toEqual([7]);
    expect(clock.elapsedMs()).toBe(60_000);
  });

  it('ends at once on a 401, without waiting out its deadline', async () => {
    const clock = instantClock();
    const unauthorized = apiError(401, 'Unauthorized');
    let looks = 0;
    const error = await waitForState({
      ...base,
      clock,
      look: async () => {
        looks++;
        throw unauthorized;
      },
      reached: () => false,
    }).catch((e: unknown) => e);
    expect(error).toBe(unauthorized);
    expect(looks).toBe(1);
  });

  it('is not retried again by the target runner once its looks spent the policy: one owner per failure', async () => {
    const clock = instantClock();
    let looks = 0;
    const wait = () =>
      waitForState({
        ...base,
        clock,
        look: async () => {
          looks++;
          throw transient();
        },
        reached: () => false,
      });
    const error = await withRetries(policy, signal, wait, undefined, clock).catch((e: unknown) => e);
    expect(looks).toBe(policy.attempts);
    expect(error).toBeInstanceOf(AttemptsFailedError);
    // the target's own attempt count, and the API's error as the cause
    expect(error).toMatchObject({ attempts: 1, cause: expect.any(ApiError) });
  });
});

describe('FleetView waits', () => {
  const workgroups: Workgroup[] = [
    {
      workgroup_id: 'wg1',
      name: 'dev',
      workspaces: [{ workspace_id: 'ws1', name: 'a', status: 'Resuming' }],
    },
  ] as Workgroup[];
  const fleet = (listWorkgroups: () => Promise<{ result: Workgroup[] }>) =>
    new FleetView({
      api: { listWorkgroups } as unknown as ApiClient,
      log: silentLogger,
      workgroups,
      pollIntervalMs: 1_000,
      retry: policy,
      clock: instantClock(),
      signal,
    });
  const active = (ws: { status?: string | null }) => ws.status === 'Active';

  it('end at once with the error of a poll refused for good (a 401), not when waitReady runs out', async () => {
    const unauthorized = apiError(401, 'Unauthorized');
    let polls = 0;
    const view = fleet(async () => {
      polls++;
      throw unauthorized;
    });
    const waits = [
      view.waitFor('wg1', 'ws1', active, { timeoutMs: 30 * 60_000, describe: 'a' }),
      view.waitFor('wg1', 'ws1', active, { timeoutMs: 30 * 60_000, describe: 'b' }),
    ];
    for (const wait of waits) await expect(wait).rejects.toBe(unauthorized);
    expect(polls).toBe(1);
  });

  it('look past a transient poll failure and resolve once the workspace is there', async () => {
    let polls = 0;
    const view = fleet(async () => {
      if (++polls === 1) throw transient();
      return {
        result: [
          { ...workgroups[0], workspaces: [{ workspace_id: 'ws1', name: 'a', status: 'Active' }] },
        ] as Workgroup[],
      };
    });
    const workspace = await view.waitFor('wg1', 'ws1', active, { timeoutMs: 30 * 60_000, describe: 'a' });
    expect(workspace.status).toBe('Active');
    expect(polls).toBe(2);
  });

  it('tell `hopeless` the stamp of each poll’s listing: each asked for after the one before', async () => {
    const view = fleet(async () => ({ result: workgroups }));
    const generations: number[] = [];
    const error = await view
      .waitFor('wg1', 'ws1', active, {
        timeoutMs: 30 * 60_000,
        describe: 'a',
        hopeless: (_ws, listing) => {
          generations.push(listing.generation);
          return listing.generation >= 4 ? 'gave up' : undefined;
        },
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'WaitAbandonedError', message: 'gave up' });
    expect(generations).toEqual([2, 3, 4]);
    expect(view.requested).toBe(4);
  });
});
