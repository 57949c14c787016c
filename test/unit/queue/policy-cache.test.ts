import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { PolicyCache } from '../../../src/queue/policy-cache.js';
import type { RunJobData } from '../../../src/queue/run-queue.js';
import type { PolicyStore, StoredPolicy } from '../../../src/store/index.js';

const text = (name: string) =>
  `version: 1\njobs:\n  ${name}:\n    schedule: "0 20 * * *"\n    action: pause\n    target: { workgroups: ["*"] }\n`;

/** The policies by hash, each read counted; a read answers a moment later, as Redis does. */
function store(texts: Record<string, string>, { failFirst = false } = {}) {
  const reads: string[] = [];
  const policies = {
    localKey: false,
    async read(sha: string): Promise<StoredPolicy | undefined> {
      reads.push(sha);
      await sleep(5);
      if (failFirst && reads.length === 1) throw new Error('Redis did not answer');
      return { text: texts[sha] as string, verdict: 'signed' };
    },
  };
  return { reads, policies: policies as unknown as PolicyStore };
}

const run = (sha: string, job: string): RunJobData => ({
  runId: `${job}@1`,
  job,
  policySha: sha,
  trigger: 'schedule',
  dryRun: false,
});

describe("a worker's cache of the policies its runs name", () => {
  it('reads and parses a policy once for a burst of runs that all name it before it is parsed', async () => {
    const { reads, policies } = store({ a: text('nightly') });
    const cache = new PolicyCache({ policies, registry: actionRegistry, env: {} });
    const resolved = await Promise.all(Array.from({ length: 200 }, () => cache.resolve(run('a', 'nightly'))));
    expect(reads).toEqual(['a']);
    expect(new Set(resolved.map(({ policy }) => policy)).size).toBe(1);
  });

  it('keeps the four policies named last: one dropped after a fifth is read again when a run names it', async () => {
    const shas = ['a', 'b', 'c', 'd', 'e'];
    const { reads, policies } = store(Object.fromEntries(shas.map((sha) => [sha, text(`job-${sha}`)])));
    const cache = new PolicyCache({ policies, registry: actionRegistry, env: {} });
    for (const sha of shas) await cache.resolve(run(sha, `job-${sha}`));
    await cache.resolve(run('e', 'job-e'));
    await cache.resolve(run('b', 'job-b'));
    expect(reads).toEqual(['a', 'b', 'c', 'd', 'e']);
    await cache.resolve(run('a', 'job-a'));
    expect(reads).toEqual(['a', 'b', 'c', 'd', 'e', 'a']);
  });

  it('tries a read that failed again for the next run', async () => {
    const { reads, policies } = store({ a: text('nightly') }, { failFirst: true });
    const cache = new PolicyCache({ policies, registry: actionRegistry, env: {} });
    await expect(cache.resolve(run('a', 'nightly'))).rejects.toThrow(/Redis did not answer/);
    await expect(cache.resolve(run('a', 'nightly'))).resolves.toMatchObject({ job: { name: 'nightly' } });
    expect(reads).toEqual(['a', 'a']);
  });
});
