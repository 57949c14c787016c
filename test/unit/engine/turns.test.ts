import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { turns } from '../../../src/engine/index.js';

describe('turns', () => {
  it('lets at most its number of callers go on a turn of the event loop, in the order they came', async () => {
    const turn = turns(2);
    const went: number[] = [];
    const callers = [0, 1, 2, 3, 4].map((index) => turn().then(() => went.push(index)));
    expect(went).toEqual([]);
    await nextTurn();
    expect(went).toEqual([0, 1]);
    await nextTurn();
    expect(went).toEqual([0, 1, 2, 3]);
    await Promise.all(callers);
    expect(went).toEqual([0, 1, 2, 3, 4]);
  });

  it('serves a caller that comes alone in the next turn', async () => {
    const turn = turns(50);
    let went = false;
    const caller = turn().then(() => {
      went = true;
    });
    await nextTurn();
    await caller;
    expect(went).toBe(true);
  });
});
