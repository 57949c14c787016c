import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatorHandle, seedState, startSimulator } from '../../../src/sim/index.js';
import { createRedis } from '../../../src/store/redis.js';
import { assertBuilt, type CliProcess, eventually, startCli } from '../../helpers/engine.js';
import { dumpRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';

// Distinctive values, so a leak cannot hide behind a common substring.
const API_KEY = 'k-QX7vTz41';
const BEARER = 'b-Rm2Lw9pE';
const DB_PASSWORD = 'p-Hq5Ns8dK3';
const WEBHOOK_PATH = '/hooks/T0-s3cr3t-Zx81';

describe('secrets in a full run through the queue', () => {
  let sim: SimulatorHandle;
  let server: TestRedis;
  let hooks: Server;
  let received = '';
  let dir: string;
  let worker: CliProcess;
  const prefix = `secrets-${process.pid}`;

  beforeAll(async () => {
    assertBuilt();
    const state = seedState({ seed: 11, fleet: { workgroups: 4, workspacesPerWorkgroup: 2 } });
    sim = await startSimulator({ port: 0, transitionMs: 50, apiKey: API_KEY, bearerToken: BEARER, state });
    server = await startTestRedis();
    hooks = createServer((req, res) => {
      req.on('data', (chunk: Buffer) => {
        received += chunk.toString();
      });
      req.on('end', () => res.writeHead(200).end('ok'));
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    dir = mkdtempSync(join(tmpdir(), 'nightshift-secrets-'));
  });

  afterAll(async () => {
    await worker?.stop('SIGTERM');
    await new Promise((resolve) => hooks.close(resolve));
    await sim.close();
    await server.stop();
  });

  it('no API key, bearer token, webhook URL or database password reaches a log line, Redis, or a summary', async () => {
    const user = sim.state.dbUsers[0];
    const workgroup = sim.state.workgroups.find((wg) => wg.workgroup_id === user?.workgroup_id);
    const workspace = sim.state.workspaces.find((ws) => ws.workspace_id === user?.workspace_id);
    const sink = join(dir, 'passwords.jsonl');
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(
      policyFile,
      `version: 1
defaults:
  retry: { attempts: 2, backoff: 1s }
  notify: [ops]
notifications:
  ops:
    url: "\${OPS_WEBHOOK}"
    format: json
    on: [failure, partial, stranded, findings, recovered]
jobs:
  pause-all:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
  rotate:
    schedule: "0 3 1 * *"
    action: rotate-db-password
    target: { workgroups: ["${workgroup?.name}"], workspaces: ["${workspace?.name}"] }
    with: { username: ${user?.username}, sink: { file: ${sink} } }
  create-user:
    schedule: "0 3 1 * *"
    action: create-db-user
    target: { workgroups: ["${workgroup?.name}"] }
    with: { username: reporting, password: "\${DB_PASSWORD}" }
  review-users:
    schedule: "0 8 1 * *"
    action: org-user-review
`,
    );
    const env = {
      REDIS_URL: server.url,
      NIGHTSHIFT_REDIS_PREFIX: prefix,
      NIGHTSHIFT_API_URL: sim.url,
      NIGHTSHIFT_API_KEY: API_KEY,
      NIGHTSHIFT_BEARER_TOKEN: BEARER,
      OPS_WEBHOOK: `http://127.0.0.1:${(hooks.address() as { port: number }).port}${WEBHOOK_PATH}`,
      DB_PASSWORD,
      NIGHTSHIFT_LOG_LEVEL: 'debug',
      NIGHTSHIFT_LOG_FORMAT: 'json',
      NIGHTSHIFT_HTTP_PORT: '0',
    };
    worker = startCli(['worker'], env);
    const runs: CliProcess[] = [];
    for (const job of ['pause-all', 'rotate', 'create-user', 'review-users']) {
      const run = startCli(['run', policyFile, job, '--json'], env);
      await run.exited;
      runs.push(run);
    }
    // the review's findings went out to the webhook
    await eventually('a notification received', () => received.includes('nightshift.run'), 15_000);

    const generated = readFileSync(sink, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { password?: string })
      .flatMap((record) => (record.password ? [record.password] : []));
    expect(generated.length).toBeGreaterThan(0);

    const redis = createRedis({ url: server.url, role: 'test' });
    try {
      const places = {
        'worker output': worker.output(),
        'run output': runs.map((run) => run.output()).join('\n'),
        redis: await dumpRedis(redis, prefix),
        webhook: received,
      };
      expect(places['worker output']).toContain('"operation":"pauseWorkspace"');
      expect(places.redis).toContain('rotate@manual-');
      expect(places['run output']).toContain('"job": "create-user"');
      for (const [place, text] of Object.entries(places)) {
        for (const secret of [API_KEY, BEARER, WEBHOOK_PATH, DB_PASSWORD, ...generated]) {
          expect(text.includes(secret), `${place} contains a secret`).toBe(false);
        }
      }
    } finally {
      redis.disconnect();
    }
  }, 90_000);
});
