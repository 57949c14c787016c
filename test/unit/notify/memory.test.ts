import { describe, expect, it } from 'vitest';
import { InMemoryNotificationMemory, type SinkState } from '../../../src/notify/index.js';
import { finding } from '../../helpers/summaries.js';

const state = (runId: string, second: number, findings = [finding('r', 's')]): SinkState => ({
  runId,
  at: new Date(Date.UTC(2026, 2, 27, 20, 0, second)).toISOString(),
  outcome: 'succeeded',
  findings,
});

describe('InMemoryNotificationMemory (run --inline)', () => {
  it('keeps one state per job and sink', async () => {
    const memory = new InMemoryNotificationMemory();
    await memory.set('audit', 'ops', state('r1', 1));
    expect(await memory.get('audit', 'ops')).toEqual(state('r1', 1));
    expect(await memory.get('audit', 'chat')).toBeUndefined();
    expect(await memory.get('other', 'ops')).toBeUndefined();
  });

  it('never lets an older run overwrite a newer one', async () => {
    const memory = new InMemoryNotificationMemory();
    await memory.set('audit', 'ops', state('r2', 2));
    await memory.set('audit', 'ops', state('r1', 1, []));
    expect((await memory.get('audit', 'ops'))?.runId).toBe('r2');
  });

  it('hands out copies, so a caller cannot change what it remembers', async () => {
    const memory = new InMemoryNotificationMemory();
    await memory.set('audit', 'ops', state('r1', 1));
    (await memory.get('audit', 'ops'))?.findings.pop();
    expect((await memory.get('audit', 'ops'))?.findings).toHaveLength(1);
  });
});
