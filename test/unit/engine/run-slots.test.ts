import { describe, expect, it } from 'vitest';
import { RunSlots, RunSlotsByRun } from '../../../src/engine/index.js';

describe('RunSlots', () => {
  it('lets at most its size through at once, the next waiter in as soon as one is given back', async () => {
    const slots = new RunSlots(2);
    let inside = 0;
    let most = 0;
    const work = async (ms: number) => {
      const release = await slots.take();
      inside += 1;
      most = Math.max(most, inside);
      await new Promise((resolve) => setTimeout(resolve, ms));
      inside -= 1;
      release();
    };
    await Promise.all([work(5), work(5), work(5), work(1), work(1)]);
    expect(most).toBe(2);
  });

  it('a slot given back twice is given back once', async () => {
    const slots = new RunSlots(1);
    const release = await slots.take();
    release();
    release();
    const first = await slots.take();
    let second = false;
    void slots.take().then(() => {
      second = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBe(false);
    first();
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBe(true);
  });

  it('gives a freed slot to the waiter of the lowest rank, the first come among equals', async () => {
    const slots = new RunSlots(1);
    const held = await slots.take();
    const order: string[] = [];
    const wait = (name: string, rank: number) =>
      slots.take(rank).then((release) => {
        order.push(name);
        release();
      });
    const all = Promise.all([
      wait('part 2', 2),
      wait('part 1, first', 1),
      wait('part 1, second', 1),
      wait('part 0', 0),
    ]);
    held();
    await all;
    expect(order).toEqual(['part 0', 'part 1, first', 'part 1, second', 'part 2']);
  });
});

describe('RunSlotsByRun', () => {
  it('the executions of one run on a worker share its slots; another run has its own; the last to end drops them', () => {
    const runs = new RunSlotsByRun();
    const a = runs.join('run-1', 16);
    const b = runs.join('run-1', 16);
    const other = runs.join('run-2', 16);
    expect(b.slots).toBe(a.slots);
    expect(other.slots).not.toBe(a.slots);
    a.release();
    b.release();
    expect(runs.join('run-1', 16).slots).not.toBe(a.slots);
  });
});
