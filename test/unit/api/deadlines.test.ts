import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEADLINE_GRANULE_MS, Deadlines } from '../../../src/api/deadlines.js';

describe('shared per-call deadlines', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('calls of one caller and limit starting within a granule share one deadline; a later call gets its own', () => {
    const deadlines = new Deadlines();
    const caller = new AbortController().signal;
    const first = deadlines.forCall(1_000, caller);
    vi.advanceTimersByTime(DEADLINE_GRANULE_MS - 1);
    expect(deadlines.forCall(1_000, caller)).toBe(first);
    vi.advanceTimersByTime(1);
    expect(deadlines.forCall(1_000, caller)).not.toBe(first);
  });

  it('never shares between callers, nor between limits', () => {
    const deadlines = new Deadlines();
    const one = new AbortController().signal;
    const other = new AbortController().signal;
    const shared = deadlines.forCall(1_000, one);
    expect(deadlines.forCall(1_000, other)).not.toBe(shared);
    expect(deadlines.forCall(2_000, one)).not.toBe(shared);
    expect(deadlines.forCall(1_000, undefined)).not.toBe(shared);
  });

  it('cuts a call off no sooner than its limit and at most a granule after it, as expired', () => {
    const deadlines = new Deadlines();
    const first = deadlines.forCall(1_000, undefined);
    vi.advanceTimersByTime(DEADLINE_GRANULE_MS - 1);
    // the last call to join: its limit ends 1 ms before the deadline's
    const last = deadlines.forCall(1_000, undefined);
    expect(last).toBe(first);
    vi.advanceTimersByTime(1_000);
    expect(last.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(last.signal.aborted).toBe(true);
    expect(last.expired).toBe(true);
    expect((last.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('passes a caller’s abort on to its calls at once, not as expired; a call starting after it is aborted from the start', () => {
    const deadlines = new Deadlines();
    const caller = new AbortController();
    const deadline = deadlines.forCall(1_000, caller.signal);
    caller.abort(new Error('run cancelled'));
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.expired).toBe(false);
    expect((deadline.signal.reason as Error).message).toBe('run cancelled');
    const after = deadlines.forCall(1_000, caller.signal);
    expect(after).not.toBe(deadline);
    expect(after.signal.aborted).toBe(true);
    vi.advanceTimersByTime(2_000);
    expect(after.expired).toBe(false);
  });

  it('listens to a caller once, however many deadlines its calls run under', () => {
    const deadlines = new Deadlines();
    const caller = new AbortController();
    const add = vi.spyOn(caller.signal, 'addEventListener');
    const made = new Set();
    for (let i = 0; i < 50; i++) {
      made.add(deadlines.forCall(1_000, caller.signal));
      vi.advanceTimersByTime(DEADLINE_GRANULE_MS / 2);
    }
    expect(made.size).toBe(25);
    expect(add).toHaveBeenCalledTimes(1);
    caller.abort();
    expect([...made].filter((deadline) => (deadline as { signal: AbortSignal }).signal.aborted)).toHaveLength(
      25,
    );
  });

  it('tells the calls listening under a deadline its reason once, and none that stopped listening', () => {
    const deadlines = new Deadlines();
    const caller = new AbortController();
    const deadline = deadlines.forCall(1_000, caller.signal);
    const heard: unknown[] = [];
    const stopped = deadline.onAbort((reason) => heard.push(`stopped: ${String(reason)}`));
    deadline.onAbort((reason) => heard.push(`listening: ${String(reason)}`));
    stopped();
    caller.abort('run cancelled');
    expect(heard).toEqual(['listening: run cancelled']);
    const late: unknown[] = [];
    deadline.onAbort((reason) => late.push(reason));
    expect(late).toEqual(['run cancelled']);
  });
});
