import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPolicy, runPolicyRound, runResponseRound } from '../../bench/harness/bad-input.js';
import { type ScriptedServer, startScriptedServer } from '../../bench/harness/scripted-server.js';
import { actionRegistry } from '../../jobs/index.js';
import { ApiClient, ApiError } from '../../src/api/index.js';
import { PolicyError, parsePolicy } from '../../src/policy/index.js';

/**
 * The chaos drill's bad-input round, with smaller counts than `npm run chaos` (1,000 policies,
 * 10,000 responses): every case is rebuilt from the seed and its number (bench/harness/bad-input.ts).
 */
const SEED = 11;

describe('randomly corrupted policy files', () => {
  it('are each accepted, or refused with a PolicyError whose every problem is located inside the file', () => {
    const report = runPolicyRound(400, SEED);
    const failures = report.failures.map(
      (f) => `case ${f.index} (seed ${SEED}, ${f.source}; ${f.mutations.join('; ')}): ${f.why}`,
    );
    expect(failures).toEqual([]);
    expect(report.rejected).toBeGreaterThan(report.parsed);
    // no corruption makes the loader crawl (an alias bomb beside deep nesting took 20 s)
    expect(report.slowest.ms).toBeLessThan(5_000);
  }, 120_000);

  it('locate a syntax error after a scalar the parser read while recovering on its own line', () => {
    // the yaml package's LineCounter misses the line break inside "America/New_York\n    action",
    // which put the next problems at 5:42 and 5:44 on a 30-character line
    const text = `version: 1
jobs:
  a:
    schedule: "0 19 * * 1-5"
  ] timezone: America/New_York
    action: pause
`;
    expect(checkPolicy(text, 'recovery.yaml')).toMatchObject({ kind: 'rejected' });
    const error = refusal(text);
    expect(error.problems.map((p) => `${p.line}:${p.col}`)).toEqual(expect.arrayContaining(['6:11', '6:13']));
  });

  it('refuse an alias bomb beside a deeply nested value in well under a second', () => {
    const bomb = ['a0: &a0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 6; i++)
      bomb.push(
        `a${i}: &a${i} [${Array(9)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const text = `version: 1\ndeep: ${'['.repeat(500)}x${']'.repeat(500)}\njobs: {}\n${bomb.join('\n')}\n`;
    const started = performance.now();
    const error = refusal(text);
    // each alias used to be resolved by walking the whole document: 10,000 walks, 20-30 s
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(error.problems.map((p) => `${p.line}:${p.col}: ${p.message}`)).toContain(
      '9:40: a5[6]: alias "*a4" copies 66430 values, past the 500000 that aliases may add to a policy (an alias bomb?)',
    );
  });
});

function refusal(text: string): PolicyError {
  try {
    parsePolicy(text, 'bomb.yaml', { registry: actionRegistry, env: {} });
  } catch (error) {
    if (error instanceof PolicyError) return error;
    throw error;
  }
  throw new Error('the policy was accepted');
}

describe('fuzzed API responses through the real client', () => {
  it('each resolve or reject with an ApiError that names the operation and carries no credential', async () => {
    const report = await runResponseRound(2_000, SEED);
    const failures = report.failures.map(
      (f) =>
        `case ${f.index} (seed ${SEED}, ${f.operation}, ${f.transport} ${f.status}, ${f.what}): ${f.why}; body ${JSON.stringify(f.body)}`,
    );
    expect(failures).toEqual([]);
    expect(report.resolved).toBeGreaterThan(0);
    expect(report.apiErrors).toBeGreaterThan(report.resolved);
    expect(report.types.Network).toBeGreaterThan(0);
  }, 120_000);

  describe('a server echoing the credentials', () => {
    let server: ScriptedServer;
    beforeAll(async () => {
      server = await startScriptedServer();
    });
    afterAll(async () => {
      await server?.close();
    });

    it('in the RequestID and in every field of the ErrorDetails: no ApiError, log object or call record carries them', async () => {
      const apiKey = 'key-echo-0123456789';
      const bearerToken = 'token-echo-9876543210';
      server.replyJson(500, {
        Error: true,
        ErrorDetails: [
          {
            FieldName: `x-api-key=${apiKey}`,
            Reason: `token ${bearerToken}`,
            Type: `Internal-Error ${apiKey}`,
          },
          { FieldName: 'workspaceID', Reason: 'bad', Type: 'Bad-Request', [`extra-${bearerToken}`]: apiKey },
        ],
        Message: 'echo',
        RequestID: `req-${apiKey}`,
      });
      const calls: unknown[] = [];
      const client = new ApiClient({
        baseUrl: server.url,
        apiKey,
        bearerToken,
        onCall: (call) => calls.push(call),
      });
      const error = await client.pauseWorkspace('wg', 'ws').then(
        () => undefined,
        (e: unknown) => e,
      );
      await client.close();
      expect(error).toBeInstanceOf(ApiError);
      const shown = [
        (error as ApiError).message,
        JSON.stringify((error as ApiError).toJSON()),
        JSON.stringify(calls), // an ApiError in a call record serialises through its toJSON
      ].join('\n');
      expect(shown).not.toContain(apiKey);
      expect(shown).not.toContain(bearerToken);
      expect((error as ApiError).requestId).toBe('req-[redacted]');
      expect((error as ApiError).details[1]).toEqual({
        FieldName: 'workspaceID',
        Reason: 'bad',
        Type: 'Bad-Request',
      });
    });
  });
});
