import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../../src/store/group-commit.js';

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
});
