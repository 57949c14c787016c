// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { assertBuilt, startCli, useEngineHarness } from '../../helpers/engine.js';

const HOOK = 'https://hooks.example.com/services/T0/B0/refusal-c0ffee';
const POLICY = `version: 1
notifications:
  ops: { url: "\${OPS_HOOK}" }
jobs:
  nightly-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    notify: [ops]
`;

describe('a queued run the worker cannot start (its policy needs a variable the worker lacks)', () => {
  const harness = useEngineHarness({ workgroups: 2, workspacesPerWorkgroup: 2 });

  it('is recorded as failed with the reason, and `nightshift run` exits 1 with it instead of waiting forever', async () => {
    assertBuilt();
    const engine = harness.engine('worker-refusal');
    engine.worker(harness.sim.url); // an environment without OPS_HOOK
    const file = join(mkdtempSync(join(tmpdir(), 'nightshift-refusal-')), 'policy.yaml');
    writeFileSync(file, POLICY);
    const cli = startCli(['run', file, 'nightly-pause', '--json', '--quiet'], {
      REDIS_URL: harness.server.url,
      NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
      NIGHTSHIFT_LOG_LEVEL: 'warn',
      OPS_HOOK: HOOK,
    });
    let stdout = '';
    cli.child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    expect(await cli.exited, cli.output()).toBe(1);
    const summary = JSON.parse(stdout) as RunSummary;
    expect(summary).toMatchObject({
      outcome: 'failed',
      job: 'nightly-pause',
      action: 'unknown',
      targets: [],
    });
    expect(summary.reason).toMatch(
      /^the worker could not run it: invalid policy.*environment variable OPS_HOOK is not set/s,
    );
    expect(`${stdout}${cli.output()}`).not.toContain(HOOK);
    expect(await engine.history.get(summary.runId)).toMatchObject({
      outcome: 'failed',
      reason: summary.reason,
    });
    expect(engine.lines('run failed before it could start')).toHaveLength(1);
    // no pause was made
    expect(harness.sim.requests().filter((entry) => entry.operation === 'pauseWorkspace')).toEqual([]);
  });
});
