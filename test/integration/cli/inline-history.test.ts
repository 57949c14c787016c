import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import type { RunSummary } from '../../../src/engine/index.js';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { FindingsLedger } from '../../../src/store/findings.js';
import { assertBuilt, type Engine, startCli, useEngineHarness } from '../../helpers/engine.js';

let receiver: ScriptedServer;

beforeAll(async () => {
  receiver = await startScriptedServer();
  receiver.replyJson(200, { ok: true });
});

afterAll(async () => {
  await receiver?.close();
});

const policy = (hook: string) => `version: 1
notifications:
  audit-feed: { url: "${hook}", on: [findings] }
jobs:
  audit:
    schedule: "0 6 * * *"
    action: allow-list-audit
    target: { workgroups: ["*"] }
    with: { maxPrefix: 32 }
    notify: [audit-feed]
`;

describe('run --inline with Redis reachable', () => {
  const harness = useEngineHarness({ workgroups: 3, workspacesPerWorkgroup: 2 });

  const env = (engine: Engine, redis: string) => ({
    NIGHTSHIFT_API_URL: harness.sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    REDIS_URL: redis,
    NIGHTSHIFT_REDIS_PREFIX: engine.prefix,
    NIGHTSHIFT_LOG_LEVEL: 'warn',
  });

  it("is recorded in the history like a queued run, its findings kept in the ledger and told a sink once, as a worker's are", async () => {
    assertBuilt();
    const engine = harness.engine('inline-history');
    const file = join(mkdtempSync(join(tmpdir(), 'nightshift-inline-history-')), 'policy.yaml');
    writeFileSync(file, policy(`${receiver.url}/hook`));
    const runs: RunSummary[] = [];
    for (let i = 0; i < 2; i++) {
      const run = startCli(
        ['run', file, 'audit', '--inline', '--json', '--quiet'],
        env(engine, harness.server.url),
      );
      // the audit finds CIDRs wider than /32: exit 3
      expect(await run.exited, run.output()).toBe(3);
      runs.push(JSON.parse(run.stdout()) as RunSummary);
    }
    const [first, second] = runs;
    expect(first?.findings.length).toBeGreaterThan(0);

    const history = startCli(['history', '--job', 'audit', '--json'], env(engine, harness.server.url));
    expect(await history.exited, history.output()).toBe(0);
    const kept = JSON.parse(history.stdout()) as RunSummary[];
    expect(kept.map((run) => run.runId).sort()).toEqual([first?.runId, second?.runId].sort());
    expect(kept.find((run) => run.runId === first?.runId)).toMatchObject({
      trigger: 'manual',
      outcome: 'succeeded',
    });

    // the ledger holds the job's findings since the first run, reported last by the second
    const open = await new FindingsLedger(engine.redis, { prefix: engine.prefix }).open();
    expect(open.length).toBe(first?.findings.length);
    for (const finding of open)
      expect(finding).toMatchObject({ job: 'audit', firstSeen: first?.finishedAt, runId: second?.runId });
    // the sink heard of the findings once: the second run found nothing new
    expect(receiver.requests).toHaveLength(1);
  });

  it('without REDIS_URL keeps nothing and still runs', async () => {
    const engine = harness.engine('inline-no-redis');
    const file = join(mkdtempSync(join(tmpdir(), 'nightshift-inline-history-')), 'policy.yaml');
    writeFileSync(file, policy(`${receiver.url}/hook`));
    const run = startCli(['run', file, 'audit', '--inline', '--json', '--quiet'], env(engine, ''));
    expect(await run.exited, run.output()).toBe(3);
    expect(await engine.history.count()).toBe(0);
  });
});
