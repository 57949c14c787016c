import { describe, expect, it } from 'vitest';
import { TickGate } from '../../../src/engine/tick-gate.js';
import type { Clock } from '../../../src/time/index.js';
import { FakeClock } from '../../helpers/clock.js';

const open = () => new AbortController().signal;

describe('TickGate', () => {
  it('lets a run whose tick has come go at once', async () => {
    const clock = new FakeClock();
    const gate = new TickGate({ clock, signal: open() });
    await expect(gate.until(clock.now())).resolves.toBe(true);
  });

  it('holds a run until the clock reads its tick, even when a timer fires before the clock gets there', async () => {
    const clock = new FakeClock();
    // every timer fires a millisecond before the time it was set for, as libuv's may
    const early: Clock = {
      now: () => clock.now(),
      monotonic: () => clock.monotonic(),
      setTimer: (ms, fire) => clock.setTimer(Math.max(1, ms - 1), fire),
      sleep: (ms, signal) => clock.sleep(Math.max(1, ms - 1), signal),
    };
    const gate = new TickGate({ clock: early, signal: open() });
    const at = clock.now() + 30;
    let released = false;
    void gate.until(at).then((go) => {
      released = go;
    });
    await clock.advance(29);
    expect(released).toBe(false);
    await clock.advance(1);
    expect(released).toBe(true);
  });

  it('holds every run of one instant on one wait', () => {
    const clock = new FakeClock();
    const gate = new TickGate({ clock, signal: open() });
    const at = clock.now() + 60_000;
    expect(gate.until(at)).toBe(gate.until(at));
    expect(gate.until(at)).not.toBe(gate.until(at + 1));
  });

  it('answers false to the runs it holds, and to any after, once its signal aborts', async () => {
    const clock = new FakeClock();
    const closing = new AbortController();
    const gate = new TickGate({ clock, signal: closing.signal });
    const held = gate.until(clock.now() + 60_000);
    closing.abort();
    await expect(held).resolves.toBe(false);
    await expect(gate.until(0)).resolves.toBe(false);
    expect(clock.pending).toBe(0);
  });
});
