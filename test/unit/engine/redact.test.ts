// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore, type TargetRecord } from '../../../src/engine/index.js';
import { checkpointsWithoutSecrets, secretsHiddenFor } from '../../../src/engine/redact.js';
import { MIN_EMBEDDED_LENGTH, type PolicySecret, parsePolicy } from '../../../src/policy/index.js';
import { testRegistry } from '../../fixtures/policies/test-registry.js';

const TOKEN = 'tok-3f9a1c2e';
const job = (...secrets: PolicySecret[]) => ({ secrets });

describe('secret values in what a run shows and stores', () => {
  it('shows a whole string equal to a secret as ${NAME}, and a long one inside other text too', () => {
    const hide = secretsHiddenFor(job({ name: 'API_TOKEN', value: TOKEN }));
    expect(
      hide({
        reason: `sent ${TOKEN} in 4.2s; paused again`,
        detail: { token: TOKEN, nested: [{ id: TOKEN }], count: 3 },
        error: { message: `restoreBackup → 401 Unauthorized: token ${TOKEN} refused (${TOKEN})` },
      }),
    ).toEqual({
      reason: 'sent ${API_TOKEN} in 4.2s; paused again',
      detail: { token: '${API_TOKEN}', nested: [{ id: '${API_TOKEN}' }], count: 3 },
      error: { message: 'restoreBackup → 401 Unauthorized: token ${API_TOKEN} refused (${API_TOKEN})' },
    });
  });

  it(`replaces a secret shorter than ${MIN_EMBEDDED_LENGTH} characters only where it is the whole string`, () => {
    const hide = secretsHiddenFor(
      job({ name: 'PIN_SECRET', value: '1' }, { name: 'WG_TOKEN', value: 'ops' }),
    );
    expect(hide({ workgroup: 'ops', hours: '1', reason: 'kept 1 of 12 in ops-eu, 1 left' })).toEqual({
      workgroup: '${WG_TOKEN}',
      hours: '${PIN_SECRET}',
      reason: 'kept 1 of 12 in ops-eu, 1 left',
    });
  });

  it('leaves keys, numbers and values that are not plain data alone, and the input unchanged', () => {
    const hide = secretsHiddenFor(job({ name: 'API_TOKEN', value: TOKEN }));
    const when = new Date(0);
    const input = { [TOKEN]: TOKEN, at: when, n: 11 };
    const output = hide(input);
    expect(Object.keys(output)).toEqual([TOKEN, 'at', 'n']);
    expect(output.at).toBe(when);
    expect(output[TOKEN]).toBe('${API_TOKEN}');
    expect(input[TOKEN]).toBe(TOKEN);
  });

  it('replaces a longer secret before a shorter one inside it', () => {
    const hide = secretsHiddenFor(
      job(
        { name: 'PREFIX_SECRET', value: 'backup-2026' },
        { name: 'DAY_SECRET', value: 'backup-2026-03-29' },
      ),
    );
    expect(hide('from backup-2026-03-29 and backup-2026-04')).toBe(
      'from ${DAY_SECRET} and ${PREFIX_SECRET}-04',
    );
  });

  it('hides the secrets the policy read, a default included, and shows every other value as it is', () => {
    const policy = parsePolicy(
      `version: 1
secrets: [DRILL_WS]
jobs:
  d:
    schedule: "0 3 * * 0"
    action: drill
    with: { workgroup: "\${DRILL_WG}", workspace: "\${DRILL_WS:-drill-workspace}", backupId: "\${DRILL_BACKUP_ID}" }
`,
      'p.yaml',
      { registry: testRegistry, env: { DRILL_BACKUP_ID: 'bk-3f9a1c2e', DRILL_WG: 'ops-eu-1' } },
    );
    const hide = secretsHiddenFor(policy.jobs[0] as NonNullable<(typeof policy.jobs)[0]>);
    expect(hide('restored bk-3f9a1c2e into ops-eu-1/drill-workspace')).toBe(
      'restored bk-3f9a1c2e into ops-eu-1/${DRILL_WS}',
    );
  });

  it('changes nothing for a policy without secrets', () => {
    const record = { reason: TOKEN };
    expect(secretsHiddenFor(job())(record)).toBe(record);
  });

  it('keeps checkpoints without secrets, so a run recorded from them (abandoned) shows none either', async () => {
    const store = new MemoryCheckpointStore();
    const hide = secretsHiddenFor(job({ name: 'API_TOKEN', value: TOKEN }));
    const record: TargetRecord = {
      key: 'wg/ws',
      outcome: 'succeeded',
      attempts: 1,
      reason: `sent ${TOKEN}`,
      requestIds: [],
    };
    await checkpointsWithoutSecrets(store, hide).save('run-1', record);
    await checkpointsWithoutSecrets(store, hide).saveProgress('run-1', 'wg/ws', { token: TOKEN });
    expect((await store.load('run-1')).get('wg/ws')?.reason).toBe('sent ${API_TOKEN}');
    expect(await store.loadProgress('run-1', 'wg/ws')).toEqual({ token: '${API_TOKEN}' });
  });
});
