import { describe, expect, it } from 'vitest';
import { FlushTurn, GroupCommit } from '../../../src/store/group-commit.js';

describe('GroupCommit', () => {
  it('writes what arrives in one turn together, and what arrives while a write is under way in the next one', async () => {
    const batches: number[][] = [];
    let release: (() => void) | undefined;
    const commit = new GroupCommit(async (items: readonly number[]) => {
      batches.push([...items]);
      if (batches.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return items.map((item) => item * 10);
    });
    const first = [1, 2, 3].map((n) => commit.submit(n));
    await new Promise((resolve) => setImmediate(resolve));
    const later = [4, 5].map((n) => commit.submit(n));
    expect(batches).toEqual([[1, 2, 3]]);
    release?.();
    expect(await Promise.all([...first, ...later])).toEqual([10, 20, 30, 40, 50]);
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('fails every item of a failed write with its error, and writes the next ones afresh', async () => {
    let calls = 0;
    const commit = new GroupCommit(async (items: readonly string[]) => {
      calls += 1;
      if (calls === 1) throw new Error('Redis did not answer');
      return items.map((item) => item.toUpperCase());
    });
    const failed = await Promise.allSettled([commit.submit('a'), commit.submit('b')]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(await commit.submit('c')).toBe('C');
  });

  it('no item settles before its own write has', async () => {
    const written: string[] = [];
    const commit = new GroupCommit(async (items: readonly string[]) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      written.push(...items);
      return items;
    });
    await commit.submit('intent');
    expect(written).toEqual(['intent']);
  });

  it('flushes the commits of one turn in one callback, so their commands leave in one pipeline', async () => {
    const turn = new FlushTurn();
    const order: string[] = [];
    const intents = new GroupCommit(
      async (items: readonly string[]) => {
        order.push(`intents ${items.join(',')}`);
        // where ioredis sends its auto-pipeline: every write of the flush must have started by then
        process.nextTick(() => order.push('next tick'));
        return items;
      },
      { turn },
    );
    const checkpoints = new GroupCommit(
      async (items: readonly string[]) => {
        order.push(`checkpoints ${items.join(',')}`);
        return items;
      },
      { turn },
    );
    await Promise.all([intents.submit('a'), checkpoints.submit('x')]);
    expect(order).toEqual(['intents a', 'checkpoints x', 'next tick']);
  });

  it('no commit of a turn writes while another one of it is writing: what comes meanwhile goes in one write after', async () => {
    const turn = new FlushTurn();
    const writes: string[][] = [];
    let answer: (() => void) | undefined;
    const write = async (items: readonly string[]) => {
      writes.push([...items]);
      if (writes.length === 1) await new Promise<void>((resolve) => (answer = resolve));
      return items;
    };
    const confirmations = new GroupCommit(write, { turn });
    const intents = new GroupCommit(write, { turn });
    const first = confirmations.submit('confirm a');
    await new Promise((resolve) => setImmediate(resolve));
    const later = [intents.submit('intent b'), confirmations.submit('confirm c')];
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([['confirm a']]);
    answer?.();
    await Promise.all([first, ...later]);
    expect(writes.slice(1).sort()).toEqual([['confirm c'], ['intent b']]);
  });

  it('what arrives in the turn that answered a write goes in the next write with what waited', async () => {
    const batches: string[][] = [];
    let answer: (() => void) | undefined;
    const commit = new GroupCommit(async (items: readonly string[]) => {
      batches.push([...items]);
      if (batches.length === 1) await new Promise<void>((resolve) => (answer = resolve));
      return items;
    });
    const first = commit.submit('a');
    await new Promise((resolve) => setImmediate(resolve));
    const waiting = commit.submit('b');
    answer?.();
    await first;
    // still the turn the answer came in
    const arrived = commit.submit('c');
    await Promise.all([waiting, arrived]);
    expect(batches).toEqual([['a'], ['b', 'c']]);
  });

  it('tells its owner when it is idle, once nothing waits', async () => {
    let idle = 0;
    const commit = new GroupCommit(async (items: readonly number[]) => items, { onIdle: () => (idle += 1) });
    await Promise.all([commit.submit(1), commit.submit(2)]);
    expect(idle).toBe(1);
  });

  it('under a steady stream, flushes leave at least the spacing apart; a write after a quiet spell leaves at once', async () => {
    const turn = new FlushTurn({ spacingMs: 200 });
    const started: number[] = [];
    const commit = new GroupCommit(
      async (items: readonly number[]) => {
        started.push(performance.now());
        return items;
      },
      { turn },
    );
    const first = performance.now();
    await commit.submit(1);
    await commit.submit(2);
    await commit.submit(3);
    const [one = Number.NaN, two = Number.NaN, three = Number.NaN] = started;
    expect(one - first).toBeLessThan(150);
    // a timer may fire up to a millisecond early by the event loop's clock
    expect(two - one).toBeGreaterThanOrEqual(198);
    expect(three - two).toBeGreaterThanOrEqual(198);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const quiet = performance.now();
    await commit.submit(4);
    expect((started[3] ?? Number.NaN) - quiet).toBeLessThan(150);
  });
});
