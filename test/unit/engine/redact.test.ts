// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore, type TargetRecord } from '../../../src/engine/index.js';
import { asWrittenFor, checkpointsAsWritten, MIN_EMBEDDED_LENGTH } from '../../../src/engine/redact.js';
import { parsePolicy, type SecretParam } from '../../../src/policy/index.js';
import { testRegistry } from '../../fixtures/policies/test-registry.js';

const BACKUP = 'bk-3f9a1c2e';
const job = (...secretParams: SecretParam[]) => ({ secretParams });

describe('values from ${VAR} in what a run shows and stores', () => {
  it('shows a whole string equal to a value as written, and a long value inside other text too', () => {
    const asWritten = asWrittenFor(job({ path: 'backupId', value: BACKUP, written: '${DRILL_BACKUP_ID}' }));
    expect(
      asWritten({
        reason: `restored ${BACKUP} in 4.2s; paused again`,
        detail: { backupId: BACKUP, nested: [{ id: BACKUP }], count: 3 },
        error: { message: `restoreBackup → 404 Not-Found: backup ${BACKUP} not found (${BACKUP})` },
      }),
    ).toEqual({
      reason: 'restored ${DRILL_BACKUP_ID} in 4.2s; paused again',
      detail: { backupId: '${DRILL_BACKUP_ID}', nested: [{ id: '${DRILL_BACKUP_ID}' }], count: 3 },
      error: {
        message: 'restoreBackup → 404 Not-Found: backup ${DRILL_BACKUP_ID} not found (${DRILL_BACKUP_ID})',
      },
    });
  });

  it(`replaces a value shorter than ${MIN_EMBEDDED_LENGTH} characters only where it is the whole string`, () => {
    const asWritten = asWrittenFor(
      job(
        { path: 'keepHours', value: '1', written: '${KEEP}' },
        { path: 'workgroup', value: 'ops', written: '${WG}' },
      ),
    );
    expect(asWritten({ workgroup: 'ops', hours: '1', reason: 'kept 1 of 12 in ops-eu, 1 left' })).toEqual({
      workgroup: '${WG}',
      hours: '${KEEP}',
      reason: 'kept 1 of 12 in ops-eu, 1 left',
    });
  });

  it('leaves keys, numbers and values that are not plain data alone, and the input unchanged', () => {
    const asWritten = asWrittenFor(job({ path: 'backupId', value: BACKUP, written: '${DRILL_BACKUP_ID}' }));
    const when = new Date(0);
    const input = { [BACKUP]: BACKUP, at: when, n: 11 };
    const output = asWritten(input);
    expect(Object.keys(output)).toEqual([BACKUP, 'at', 'n']);
    expect(output.at).toBe(when);
    expect(output[BACKUP]).toBe('${DRILL_BACKUP_ID}');
    expect(input[BACKUP]).toBe(BACKUP);
  });

  it('replaces a longer value before a shorter one inside it', () => {
    const asWritten = asWrittenFor(
      job(
        { path: 'prefix', value: 'backup-2026', written: '${PREFIX}' },
        { path: 'backupId', value: 'backup-2026-03-29', written: 'backup-${DAY}' },
      ),
    );
    expect(asWritten('from backup-2026-03-29 and backup-2026-04')).toBe(
      'from backup-${DAY} and ${PREFIX}-04',
    );
  });

  it('takes what the policy recorded: a value from ${NAME:-default} shows as written, default and all', () => {
    const policy = parsePolicy(
      `version: 1
jobs:
  d:
    schedule: "0 3 * * 0"
    action: drill
    with: { workgroup: ops, workspace: "\${DRILL_WS:-drill-workspace}", backupId: "\${DRILL_BACKUP_ID}" }
`,
      'p.yaml',
      { registry: testRegistry, env: { DRILL_BACKUP_ID: BACKUP } },
    );
    const asWritten = asWrittenFor(policy.jobs[0] as NonNullable<(typeof policy.jobs)[0]>);
    expect(asWritten(`restored ${BACKUP} into drill-workspace`)).toBe(
      'restored ${DRILL_BACKUP_ID} into ${DRILL_WS:-drill-workspace}',
    );
  });

  it('changes nothing for a job without values from the environment', () => {
    const record = { reason: BACKUP };
    expect(asWrittenFor(job())(record)).toBe(record);
  });

  it('keeps checkpoints as written, so a run recorded from them (abandoned) shows no value either', async () => {
    const store = new MemoryCheckpointStore();
    const asWritten = asWrittenFor(job({ path: 'backupId', value: BACKUP, written: '${DRILL_BACKUP_ID}' }));
    const record: TargetRecord = {
      key: 'wg/ws',
      outcome: 'succeeded',
      attempts: 1,
      reason: `restored ${BACKUP}`,
      requestIds: [],
    };
    await checkpointsAsWritten(store, asWritten).save('run-1', record);
    expect((await store.load('run-1')).get('wg/ws')?.reason).toBe('restored ${DRILL_BACKUP_ID}');
  });
});
