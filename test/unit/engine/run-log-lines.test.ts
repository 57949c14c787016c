import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Action, workspaceRef } from '../../../src/engine/index.js';
import { CENSORED } from '../../../src/log/censor.js';
import { createLogger } from '../../../src/log/logger.js';
import { runOneJob } from '../../helpers/one-job-run.js';

const POLICY_SECRET = 'policy-secret-value-7f3a';

/** A Redis error as ioredis makes it: the command it answered rides along, AUTH's password in its args. */
function redisError(): Error {
  return Object.assign(new Error(`WRONGPASS for ${POLICY_SECRET}`), {
    command: { name: 'auth', args: ['default', 'redis-pass-9'] },
  });
}

const params = z.strictObject({ note: z.string() });

/** Logs what an action might: a secret under a secret's key, a Redis error, a policy secret's value. */
const chatty: Action<typeof params> = {
  name: 'chatty',
  description: 'Test only: logs secrets on the run line and on a target line.',
  destructive: false,
  scope: 'workspace',
  params,
  example: '',
  plan: async () => {},
  run: async (ctx, { note }) => {
    ctx.log.warn({ password: 'run-pass-1', err: redisError(), note }, 'run line');
    await ctx.forEachTarget(ctx.workspaces, workspaceRef, async (_ws, step) => {
      step.log.warn({ headers: { 'x-api-key': 'key-2' }, err: redisError(), note }, 'target line');
      return { outcome: 'succeeded' as const };
    });
  },
};

async function runLines(): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    level: 'warn',
    destination: { write: (line: string) => lines.push(JSON.parse(line)) },
  });
  const summary = await runOneJob({
    action: chatty as Action,
    policy: `version: 1
secrets: [NOTE_SECRET]
jobs:
  chatty:
    schedule: "0 20 * * *"
    action: chatty
    target: { workgroups: ["*"] }
    with: { note: "\${NOTE_SECRET}" }
`,
    env: { NOTE_SECRET: POLICY_SECRET },
    log,
  });
  expect(summary.outcome).toBe('succeeded');
  return lines;
}

describe("a run's log lines", () => {
  it("are censored like every other line, though a run hides its policy's secrets with a formatter of its own", async () => {
    const lines = await runLines();
    const text = JSON.stringify(lines);
    for (const secret of ['run-pass-1', 'key-2', 'redis-pass-9', POLICY_SECRET])
      expect(text).not.toContain(secret);
    const run = lines.find((line) => line.msg === 'run line');
    const target = lines.find((line) => line.msg === 'target line');
    expect(run).toMatchObject({ runId: 'chatty@1', password: CENSORED, note: '${NOTE_SECRET}' });
    expect(target).toMatchObject({
      runId: 'chatty@1',
      headers: { 'x-api-key': CENSORED },
      note: '${NOTE_SECRET}',
    });
  });

  it("keep an error's type, message and stack, the policy's secret values hidden in them", async () => {
    const lines = await runLines();
    for (const msg of ['run line', 'target line']) {
      const err = lines.find((line) => line.msg === msg)?.err as Record<string, unknown> | undefined;
      expect(err).toMatchObject({
        type: 'Error',
        message: 'WRONGPASS for ${NOTE_SECRET}',
        command: { name: 'auth', args: CENSORED },
      });
      expect(String(err?.stack)).toContain('WRONGPASS for ${NOTE_SECRET}');
    }
  });
});
