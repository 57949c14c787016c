// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../src/engine/index.js';
import { enqueueRuns, manualRunId } from '../../../src/queue/run-queue.js';
import { DEFAULT_API_KEY, DEFAULT_BEARER_TOKEN } from '../../../src/sim/index.js';
import { policySha } from '../../../src/store/policy-store.js';
import {
  assertBuilt,
  type CliProcess,
  type Engine,
  eventually,
  HARNESS_POLICY_KEY,
  logged,
  logLines,
  startCli,
  useEngineHarness,
} from '../../helpers/engine.js';

/**
 * Issue 26: a client of Redis alone (no policy key) queued a run whose sink command wrote the
 * worker's API key to a file. Workers now run only policy texts signed with NIGHTSHIFT_POLICY_KEY,
 * and a sink command sees none of the worker's credentials.
 */
const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 1 });

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-policy-signing-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function fresh(stem: string, extension = '.yaml'): string {
  return join(dir, `${stem}-${++files}${extension}`);
}

function write(text: string): string {
  const file = fresh('policy');
  writeFileSync(file, text);
  return file;
}

/** The policy: a password rotation whose sink is a shell writing the worker's API key to `out`. */
function evilPolicy(out: string): string {
  return `version: 1
jobs:
  evil:
    schedule: "0 3 1 * *"
    action: rotate-db-password
    target: { workgroups: ["*"] }
    with:
      username: app
      sink: { command: ["/bin/sh", "-c", "echo KEY=$NIGHTSHIFT_API_KEY > ${out}"] }
`;
}

/** A dry-run pause: a run to queue that changes nothing, one text per `mark`. */
function pausePolicy(mark: string): string {
  return `version: 1
jobs:
  pause-all:
    schedule: "0 20 * * *"
    action: pause
    dryRun: true
    target: { workgroups: ["*"] }
# ${mark}
`;
}

/** The variables a worker or `run` gets to reach this file's Redis under `engine`'s prefix. */
function redisEnv(engine: Engine): Record<string, string> {
  return { REDIS_URL: harness.server.url, NIGHTSHIFT_REDIS_PREFIX: engine.prefix };
}

/** A worker process acting on the simulator, signing and checking with `key` unless `extra` says otherwise. */
function startWorker(engine: Engine, extra: Record<string, string> = {}): CliProcess {
  return startCli(['worker'], {
    ...redisEnv(engine),
    NIGHTSHIFT_API_URL: harness.sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_POLL_INTERVAL_MS: '100',
    NIGHTSHIFT_LOG_FORMAT: 'json',
    ...extra,
  });
}

/** `nightshift run <file> <job> --json --quiet` with `env`: its exit code, summary (when printed) and stderr. */
async function run(
  file: string,
  job: string,
  env: Record<string, string>,
): Promise<{ code: number | NodeJS.Signals | null; summary: RunSummary | undefined; stderr: string }> {
  const cli = startCli(['run', file, job, '--json', '--quiet'], { NIGHTSHIFT_LOG_LEVEL: 'warn', ...env });
  const code = await cli.exited;
  const stdout = cli.stdout().trim();
  // --json prints the summary, or an error object on bad usage
  const printed = stdout ? (JSON.parse(stdout) as Partial<RunSummary>) : undefined;
  return { code, summary: printed?.runId ? (printed as RunSummary) : undefined, stderr: cli.stderr() };
}

function calls(operation: string): number {
  return harness.sim.requests().filter((entry) => entry.operation === operation).length;
}

describe('a client of Redis alone, without the policy key', () => {
  it('cannot queue a run through the CLI: run exits 2 naming NIGHTSHIFT_POLICY_KEY and queues nothing', async () => {
    const engine = harness.engine('signing-cli');
    const out = fresh('leaked', '.txt');
    const result = await run(write(evilPolicy(out)), 'evil', {
      ...redisEnv(engine),
      NIGHTSHIFT_POLICY_KEY: '',
      NIGHTSHIFT_API_KEY: '',
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      "NIGHTSHIFT_POLICY_KEY (or NIGHTSHIFT_POLICY_KEY_FILE) is not set; a queued run's policy is signed with the key the workers check",
    );
    expect(Object.values(await engine.queue.getJobCounts()).every((count) => count === 0)).toBe(true);
    expect(existsSync(out)).toBe(false);
  });

  it('writing the policy and the run straight into Redis, makes no worker run its sink command: the run fails naming the variable, logged and counted', async () => {
    const engine = harness.engine('signing-raw');
    const worker = startWorker(engine, { NIGHTSHIFT_UI_TOKEN: 'ui-token-signing' });
    try {
      const address = (await logged(worker, 'ops server listening')).address as string;
      await logged(worker, 'worker started');

      // unsigned: the text under its sha, and a run naming it, as any Redis client can write them
      const out = fresh('leaked', '.txt');
      const text = evilPolicy(out);
      const sha = policySha(text);
      await engine.redis.set(engine.keys.policy(sha), text);
      const unsigned = manualRunId('evil');
      await enqueueRuns(engine.queue, [
        { runId: unsigned, job: 'evil', policySha: sha, trigger: 'manual', dryRun: false },
      ]);

      // forged: the signatures of a text the key signed, copied onto another
      const signedSha = await engine.policies.put(pausePolicy('signed by the scheduler'));
      const forgedOut = fresh('leaked', '.txt');
      const forgedText = evilPolicy(forgedOut);
      const forgedSha = policySha(forgedText);
      await engine.redis.set(engine.keys.policy(forgedSha), forgedText);
      await engine.redis.hset(
        engine.keys.policySignatures(forgedSha),
        await engine.redis.hgetall(engine.keys.policySignatures(signedSha)),
      );
      const forged = `${manualRunId('evil')}-forged`;
      await enqueueRuns(engine.queue, [
        { runId: forged, job: 'evil', policySha: forgedSha, trigger: 'manual', dryRun: false },
      ]);

      for (const [runId, why] of [
        [
          unsigned,
          `policy ${sha.slice(0, 12)} refused: it is not signed; a worker runs only policy texts signed with NIGHTSHIFT_POLICY_KEY`,
        ],
        [
          forged,
          `policy ${forgedSha.slice(0, 12)} refused: its signature for this worker's key does not match its text`,
        ],
      ] as const) {
        const summary = await engine.waitForRun(runId);
        expect(summary).toMatchObject({ outcome: 'failed', job: 'evil', targets: [] });
        expect(summary.reason).toContain(`the worker could not run it: ${why}`);
      }
      // the command never ran, and nothing reached the API
      expect(existsSync(out)).toBe(false);
      expect(existsSync(forgedOut)).toBe(false);
      expect(calls('updateDbUserPassword')).toBe(0);

      const refusals = logLines(worker).filter(
        (line) => line.msg === 'run refused: its policy is not signed with a key this worker holds',
      );
      expect(
        refusals
          .map(({ runId, job, verdict }) => ({ runId, job, verdict }))
          .sort((a, b) => String(a.verdict).localeCompare(String(b.verdict))),
      ).toEqual([
        { runId: forged, job: 'evil', verdict: 'bad-signature' },
        { runId: unsigned, job: 'evil', verdict: 'unsigned' },
      ]);
      const metrics = await (
        await fetch(`${address}/metrics`, { headers: { authorization: 'Bearer ui-token-signing' } })
      ).text();
      expect(metrics).toContain('nightshift_policy_refusals_total{verdict="unsigned"} 1');
      expect(metrics).toContain('nightshift_policy_refusals_total{verdict="bad-signature"} 1');
    } finally {
      expect(await worker.stop('SIGTERM')).toBe(0);
    }
    expect(worker.output()).not.toContain(HARNESS_POLICY_KEY);
  });
});

describe('a policy in force someone wrote into Redis', () => {
  it('is no name list for suspend where the key is set; without a key, suspend reads its names only', async () => {
    const engine = harness.engine('signing-in-force');
    const text = pausePolicy('named in force by a Redis client');
    const sha = policySha(text);
    await engine.redis.set(engine.keys.policy(sha), text);
    await engine.policies.setCurrent(sha, { host: 'forger' });
    const suspend = (key: string) =>
      startCli(['suspend', 'pause-all', '--json'], { ...redisEnv(engine), NIGHTSHIFT_POLICY_KEY: key });

    const keyed = suspend(HARNESS_POLICY_KEY);
    expect(await keyed.exited).toBe(2);
    expect(JSON.parse(keyed.stdout())).toMatchObject({
      error: 'no-policy',
      message: expect.stringContaining(`the policy the schedulers run (sha ${sha.slice(0, 12)}, loaded`),
    });
    expect(keyed.stdout()).toContain("is not signed with this process's NIGHTSHIFT_POLICY_KEY");
    expect(await engine.suspensions.get('pause-all')).toBeUndefined();

    const keyless = suspend('');
    expect(await keyless.exited, keyless.output()).toBe(0);
    expect(await engine.suspensions.get('pause-all')).toBeDefined();
  });
});

describe('a worker with the key', () => {
  it('runs a policy `nightshift run` signed with it; its sink command sees PATH, HOME, its secret values and its env: list, none of the worker’s credentials', async () => {
    const engine = harness.engine('signing-sink');
    const credentials = {
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_BEARER_TOKEN: DEFAULT_BEARER_TOKEN,
      NIGHTSHIFT_UI_TOKEN: 'ui-token-sink-env',
      OPS_WEBHOOK: 'https://hooks.example.com/services/T0/B0/sink-env-c0ffee',
    };
    const worker = startWorker(engine, {
      ...credentials,
      NIGHTSHIFT_SINK_COMMANDS: process.execPath,
      VAULT_ADDR: 'https://vault.example.com',
    });
    try {
      await logged(worker, 'worker started');
      const out = fresh('sink-env', '.json');
      const script = fresh('sink', '.cjs');
      writeFileSync(
        script,
        `let input = ''; process.stdin.on('data', (c) => { input += c; }); process.stdin.on('end', () => require('node:fs').writeFileSync(process.argv[2], JSON.stringify(process.env)));`,
      );
      const file = write(`version: 1
notifications:
  ops: { url: "\${OPS_WEBHOOK}" }
jobs:
  reporting-user:
    schedule: "0 6 * * 1"
    action: create-db-user
    target: { workgroups: ["*"] }
    notify: [ops]
    with:
      username: reporting
      sink: { command: ["${process.execPath}", "${script}", "${out}"], env: [VAULT_ADDR] }
`);
      const result = await run(file, 'reporting-user', {
        ...redisEnv(engine),
        OPS_WEBHOOK: credentials.OPS_WEBHOOK,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.summary).toMatchObject({ outcome: 'succeeded', counts: { succeeded: 1 } });

      const seen = JSON.parse(readFileSync(out, 'utf8')) as Record<string, string>;
      expect(Object.keys(seen).sort()).toEqual(
        [
          'HOME',
          'NIGHTSHIFT_SECRET_ID',
          'NIGHTSHIFT_SECRET_JOB',
          'NIGHTSHIFT_SECRET_RUN_ID',
          'NIGHTSHIFT_SECRET_STATE',
          'NIGHTSHIFT_SECRET_USERNAME',
          'NIGHTSHIFT_SECRET_WORKGROUP_ID',
          'NIGHTSHIFT_SECRET_WORKSPACE_ID',
          'PATH',
          'VAULT_ADDR',
        ].filter((name) => name !== 'HOME' || process.env.HOME !== undefined),
      );
      expect(seen).toMatchObject({ PATH: process.env.PATH, VAULT_ADDR: 'https://vault.example.com' });
      const text = JSON.stringify(seen);
      for (const secret of [...Object.values(credentials), HARNESS_POLICY_KEY, harness.server.url])
        expect(text).not.toContain(secret);
    } finally {
      expect(await worker.stop('SIGTERM')).toBe(0);
    }
  });

  it('refuses at run time a sink program NIGHTSHIFT_SINK_COMMANDS does not list, though the process that queued it did not know the list', async () => {
    const engine = harness.engine('signing-allowlist');
    const worker = startWorker(engine, { NIGHTSHIFT_SINK_COMMANDS: '/usr/local/bin/store-secret' });
    try {
      await logged(worker, 'worker started');
      const out = fresh('not-run', '.txt');
      const file = write(`version: 1
jobs:
  reporting-user:
    schedule: "0 6 * * 1"
    action: create-db-user
    target: { workgroups: ["*"] }
    with:
      username: refused
      sink: { command: ["/bin/sh", "-c", "touch ${out}"] }
`);
      const before = calls('createDbUser');
      const result = await run(file, 'reporting-user', redisEnv(engine));
      expect(result.code, result.stderr).toBe(1);
      expect(result.summary?.outcome).toBe('failed');
      expect(result.summary?.targets[0]?.error?.message).toBe(
        'secret sink command /bin/sh: refused: it is not one of the programs NIGHTSHIFT_SINK_COMMANDS allows (/usr/local/bin/store-secret), by absolute path as written',
      );
      expect(existsSync(out)).toBe(false);
      expect(calls('createDbUser')).toBe(before);
    } finally {
      expect(await worker.stop('SIGTERM')).toBe(0);
    }
  });
});

describe('a key change', () => {
  it('accepts runs signed with the old or the new key while workers hold both, and refuses the old one’s once it is removed', async () => {
    const engine = harness.engine('signing-rotation');
    const OLD = randomBytes(32).toString('hex');
    const NEW = randomBytes(32).toString('hex');
    const queuedWith = (key: string, mark: string) =>
      run(write(pausePolicy(mark)), 'pause-all', { ...redisEnv(engine), NIGHTSHIFT_POLICY_KEY: key });

    // during the change: the workers hold both keys; `run` (or a scheduler) signs with either or both
    const during = startWorker(engine, { NIGHTSHIFT_POLICY_KEY: `${NEW},${OLD}` });
    try {
      await logged(during, 'worker started');
      for (const [key, mark] of [
        [OLD, 'queued with the old key'],
        [NEW, 'queued with the new key'],
        [`${NEW},${OLD}`, 'queued with both'],
      ] as const) {
        const result = await queuedWith(key, mark);
        expect(result.code, `${mark}: ${result.stderr}`).toBe(0);
        expect(result.summary?.outcome, mark).toBe('succeeded');
      }
    } finally {
      expect(await during.stop('SIGTERM')).toBe(0);
    }

    // after it: the old key removed from the workers
    const after = startWorker(engine, { NIGHTSHIFT_POLICY_KEY: NEW });
    try {
      await logged(after, 'worker started');
      expect((await queuedWith(NEW, 'the new key after the change')).code).toBe(0);
      const stale = await queuedWith(OLD, 'a process still on the old key');
      expect(stale.code).toBe(1);
      expect(stale.summary?.reason).toContain(
        'refused: it is signed with a key this worker does not hold; set NIGHTSHIFT_POLICY_KEY to the key the schedulers and `nightshift run` sign with (during a key change, both keys)',
      );
    } finally {
      expect(await after.stop('SIGTERM')).toBe(0);
    }
    for (const key of [OLD, NEW]) expect(`${during.output()}${after.output()}`).not.toContain(key);
  }, 60_000);
});

describe('start without NIGHTSHIFT_POLICY_KEY', () => {
  it('runs its own schedule with a key of its own, and refuses a run queued from another process, saying why', async () => {
    const engine = harness.engine('signing-start');
    const file = write(`version: 1
jobs:
  every-second:
    schedule: "* * * * * *"
    action: pause
    dryRun: true
    target: { workgroups: ["*"] }
`);
    const start = startCli(['start', file], {
      ...redisEnv(engine),
      NIGHTSHIFT_API_URL: harness.sim.url,
      NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
      NIGHTSHIFT_POLICY_KEY: '',
      NIGHTSHIFT_LOG_FORMAT: 'json',
    });
    try {
      await logged(
        start,
        'NIGHTSHIFT_POLICY_KEY is not set: policies are signed with a key of this process, so its worker runs only what its own scheduler queues (set the key here and for `nightshift run` to queue runs from elsewhere)',
      );
      await eventually(
        'a scheduled run of its own',
        async () =>
          (await engine.history.list({ job: 'every-second' })).find(
            (summary) => summary.trigger === 'schedule' && summary.outcome === 'succeeded',
          ),
        15_000,
      );
      // another text: the one start stored carries its own signature beside any other
      const queued = await run(
        write(`${readFileSync(file, 'utf8')}# queued from elsewhere\n`),
        'every-second',
        redisEnv(engine),
      );
      expect(queued.code, queued.stderr).toBe(1);
      expect(queued.summary?.reason).toContain(
        'refused: this process (start without NIGHTSHIFT_POLICY_KEY) signs with a key of its own and runs only the policies it stored itself',
      );
    } finally {
      expect(await start.stop('SIGTERM')).toBe(0);
    }
  }, 45_000);
});
