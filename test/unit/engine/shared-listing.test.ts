import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { callScope, LedgerUnansweredError, listAhead, sharedListings } from '../../../src/engine/index.js';
import { silentLogger } from '../../../src/log/logger.js';

/** A client whose listings the test answers by hand, in the order they were asked for. */
function handAnsweredClient() {
  const asked: {
    answer: (workgroups: string) => void;
    fail: (error: Error) => void;
    signal: AbortSignal | undefined;
  }[] = [];
  let closed = 0;
  const api = {
    listWorkgroups: (options: { signal?: AbortSignal } = {}) =>
      new Promise((resolve, reject) => {
        const requestId = `req-${asked.length + 1}`;
        asked.push({
          answer: (name) => resolve({ result: [{ name }], requestId, message: 'ok' }),
          fail: reject,
          signal: options.signal,
        });
        // as the transport does: a call whose signal aborts fails at once
        options.signal?.addEventListener('abort', () => reject(options.signal?.reason));
      }),
    close: async () => {
      closed += 1;
    },
  } as unknown as ApiClient;
  return { api, asked, closed: () => closed };
}

/** Longer than a request waits for more callers (25 ms at most). */
const turn = () => new Promise((resolve) => setTimeout(resolve, 40));

/** Lists through `shared` as a run does: in a call scope that collects the run's request IDs. */
function listAsRun(shared: ApiClient, options: { signal?: AbortSignal } = {}) {
  const requestIds: string[] = [];
  const listing = callScope.run({ log: silentLogger, requestIds }, () => shared.listWorkgroups(options));
  return { listing, requestIds };
}

describe('sharedListings', () => {
  it('serves listings asked for together with one request, recorded by every run', async () => {
    const { api, asked } = handAnsweredClient();
    const shared = sharedListings(api).api;
    const runs = [listAsRun(shared), listAsRun(shared), listAsRun(shared)];
    await turn();
    expect(asked).toHaveLength(1);
    asked[0]?.answer('first');
    for (const run of runs) {
      expect((await run.listing).result).toEqual([{ name: 'first' }]);
      expect(run.requestIds).toEqual(['req-1']);
    }
  });

  it('never serves a listing whose request began before the call: one asked for meanwhile waits for the next request', async () => {
    const { api, asked } = handAnsweredClient();
    const shared = sharedListings(api).api;
    const early = listAsRun(shared);
    await turn();
    const late = [listAsRun(shared), listAsRun(shared)];
    await turn();
    // the late calls came while the first request was under way: none is sent for them yet
    expect(asked).toHaveLength(1);
    asked[0]?.answer('before');
    expect((await early.listing).result).toEqual([{ name: 'before' }]);
    await turn();
    expect(asked).toHaveLength(2);
    asked[1]?.answer('after');
    for (const run of late) expect((await run.listing).result).toEqual([{ name: 'after' }]);
  });

  it('waits for callers that keep coming within 2 ms of each other, but no more than 25 ms after the first', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const { api, asked } = handAnsweredClient();
    const shared = sharedListings(api).api;
    // a call every millisecond for 30 ms, each in a turn of its own
    const runs = [listAsRun(shared)];
    for (let ms = 1; ms <= 30; ms++) {
      await vi.advanceTimersByTimeAsync(1);
      runs.push(listAsRun(shared));
    }
    expect(asked).toHaveLength(1);
    asked[0]?.answer('first');
    await vi.advanceTimersByTimeAsync(0);
    expect(asked).toHaveLength(2);
    asked[1]?.answer('second');
    const served = await Promise.all(runs.map(async (run) => (await run.listing).requestId));
    expect(served.slice(0, 20)).toEqual(Array(20).fill('req-1'));
    expect(served.slice(26)).toEqual(Array(5).fill('req-2'));
  });

  it('a run that stops waiting stops alone: the request goes on for the others', async () => {
    const { api, asked } = handAnsweredClient();
    const shared = sharedListings(api).api;
    const stopping = new AbortController();
    const gone = listAsRun(shared, { signal: stopping.signal });
    const staying = listAsRun(shared);
    await turn();
    stopping.abort(new Error('run cut short'));
    await expect(gone.listing).rejects.toThrow('run cut short');
    expect(asked[0]?.signal?.aborted).toBe(false);
    asked[0]?.answer('kept');
    expect((await staying.listing).result).toEqual([{ name: 'kept' }]);
  });

  it('calls the request off once every run it served stopped waiting: a hanging API cannot hold a shutdown', async () => {
    const { api, asked } = handAnsweredClient();
    const shared = sharedListings(api).api;
    const shutdown = new AbortController();
    const runs = [
      listAsRun(shared, { signal: shutdown.signal }),
      listAsRun(shared, { signal: shutdown.signal }),
    ];
    await turn();
    shutdown.abort(new Error('worker stopping'));
    for (const run of runs) await expect(run.listing).rejects.toThrow('worker stopping');
    expect(asked[0]?.signal?.aborted).toBe(true);
    // a run that asks afterwards gets a request of its own, not the one called off
    const later = listAsRun(shared);
    await turn();
    expect(asked).toHaveLength(2);
    expect(asked[1]?.signal?.aborted).toBe(false);
    asked[1]?.answer('after');
    expect((await later.listing).result).toEqual([{ name: 'after' }]);
  });

  it('sends nothing for runs that all stopped waiting before their request went', async () => {
    const { api, asked } = handAnsweredClient();
    const shared = sharedListings(api).api;
    const stopping = new AbortController();
    const run = listAsRun(shared, { signal: stopping.signal });
    stopping.abort(new Error('run cut short'));
    await expect(run.listing).rejects.toThrow('run cut short');
    await turn();
    expect(asked).toHaveLength(0);
  });

  it('a failed request fails every run that shared it, and the next listing is asked for afresh', async () => {
    const { api, asked } = handAnsweredClient();
    const shared = sharedListings(api).api;
    const runs = [listAsRun(shared), listAsRun(shared)];
    await turn();
    asked[0]?.fail(new Error('503 from the API'));
    for (const run of runs) await expect(run.listing).rejects.toThrow('503 from the API');
    const again = listAsRun(shared);
    await turn();
    expect(asked).toHaveLength(2);
    asked[1]?.answer('fresh');
    expect((await again.listing).result).toEqual([{ name: 'fresh' }]);
  });

  it('passes every other operation to the client as it is', async () => {
    const { api, closed } = handAnsweredClient();
    await sharedListings(api).api.close();
    expect(closed()).toBe(1);
  });

  it("reads the ledger's sequence once for a request of sequenced listings, after its callers joined and before it is sent", async () => {
    const { api, asked } = handAnsweredClient();
    const events: string[] = [];
    let seq = 4;
    const shared = sharedListings(api, {
      sequence: async () => {
        events.push(`read ${seq} (${asked.length} requests sent)`);
        return seq;
      },
    });
    const signal = new AbortController().signal;
    const runs = [shared.sequenced(signal), shared.sequenced(signal), shared.sequenced(signal)];
    seq = 5; // a ledger write after the calls began, before the request: the listing is later than it
    await turn();
    expect(events).toEqual(['read 5 (0 requests sent)']);
    expect(asked).toHaveLength(1);
    asked[0]?.answer('first');
    for (const run of runs) expect((await run).seq).toBe(5);
  });

  it("takes the sequence its caller read (a run's admission) without reading it again, and sends a prompt request without a quiet pause", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const { api, asked } = handAnsweredClient();
    const sequence = vi.fn(async () => 9);
    const shared = sharedListings(api, { sequence });
    const ahead = [listAhead(shared, 3), listAhead(shared, 4)];
    // no timer has run: the request went once this turn's callers had joined
    await Promise.resolve();
    await Promise.resolve();
    expect(asked).toHaveLength(1);
    asked[0]?.answer('prompt');
    expect((await ahead[0]?.listing)?.seq).toBe(3);
    expect((await ahead[1]?.listing)?.seq).toBe(4);
    expect(sequence).not.toHaveBeenCalled();
  });

  it('a sequence Redis did not give fails the sequenced callers, not a plain caller sharing the request', async () => {
    const { api, asked } = handAnsweredClient();
    const shared = sharedListings(api, {
      sequence: async () => {
        throw new Error('Connection is closed.');
      },
    });
    const sequenced = shared.sequenced(new AbortController().signal);
    const plain = listAsRun(shared.api);
    await turn();
    asked[0]?.answer('listed');
    await expect(sequenced).rejects.toThrow(LedgerUnansweredError);
    await expect(sequenced).rejects.toThrow('Connection is closed.');
    expect((await plain.listing).result).toEqual([{ name: 'listed' }]);
  });

  it('a listing asked for ahead and called off sends nothing when nobody else wants it', async () => {
    const { api, asked } = handAnsweredClient();
    const shared = sharedListings(api, { sequence: async () => 1 });
    const ahead = listAhead(shared, 1);
    ahead.cancel(new Error('run skipped'));
    await expect(ahead.listing).rejects.toThrow('run skipped');
    await turn();
    expect(asked).toHaveLength(0);
  });
});
