import { describe, expect, it } from 'vitest';
import { TickGate } from '../../../src/engine/tick-gate.js';

describe('TickGate', () => {
  it('lets a run whose tick has come go at once', async () => {
    const gate = new TickGate({ now: () => 1_000, signal: new AbortController().signal });
    await expect(gate.until(1_000)).resolves.toBe(true);
  });

  it('holds a run until the clock reads its tick, even when a timer fires before the clock gets there', async () => {
    const start = Date.now();
    // a clock at half speed: every timer fires before it reads the time slept for
    const now = () => start + (Date.now() - start) / 2;
    const gate = new TickGate({ now, signal: new AbortController().signal });
    const at = now() + 30;
    await expect(gate.until(at)).resolves.toBe(true);
    expect(now()).toBeGreaterThanOrEqual(at);
  });

  it('holds every run of one instant on one wait', () => {
    const gate = new TickGate({ now: Date.now, signal: new AbortController().signal });
    const at = Date.now() + 60_000;
    expect(gate.until(at)).toBe(gate.until(at));
    expect(gate.until(at)).not.toBe(gate.until(at + 1));
  });

  it('answers false to the runs it holds, and to any after, once its signal aborts', async () => {
    const closing = new AbortController();
    const gate = new TickGate({ now: Date.now, signal: closing.signal });
    const held = gate.until(Date.now() + 60_000);
    closing.abort();
    await expect(held).resolves.toBe(false);
    await expect(gate.until(0)).resolves.toBe(false);
  });
});
