import { describe, expect, it } from 'vitest';
import { CENSORED, censor } from '../../../src/log/censor.js';
import { createLogger } from '../../../src/log/index.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    level: 'debug',
    destination: { write: (line: string) => lines.push(JSON.parse(line)) },
  });
  return { log, lines };
}

describe('the logger censors secrets wherever a line carries them', () => {
  it('censors secret keys at the top of a line and two levels down, and a top-level url', () => {
    const { log, lines } = capture();
    log.info(
      {
        apiKey: 'k0',
        url: 'https://hooks.example/secret-path',
        config: {
          bearerToken: 't1',
          token: 't2',
          webhookUrl: 'https://hooks.example/w',
          nested: { password: 'p2', secret: 's2' },
        },
        keep: { url: 'https://api.example/v1', name: 'visible' },
      },
      'settings',
    );
    const line = JSON.stringify(lines[0]);
    for (const secret of ['k0', 'secret-path', 't1', 't2', 'hooks.example/w', 'p2', 's2'])
      expect(line).not.toContain(secret);
    expect(lines[0]).toMatchObject({
      apiKey: CENSORED,
      url: CENSORED,
      config: {
        bearerToken: CENSORED,
        token: CENSORED,
        webhookUrl: CENSORED,
        nested: { password: CENSORED, secret: CENSORED },
      },
      keep: { url: 'https://api.example/v1', name: 'visible' },
      msg: 'settings',
    });
  });

  it('censors credential headers whatever their case, at the top and one level down', () => {
    const { log, lines } = capture();
    log.info(
      {
        headers: { 'x-api-key': 'k1', Accept: 'json' },
        request: { headers: { Authorization: 'Bearer b1' } },
      },
      'call',
    );
    expect(lines[0]).toMatchObject({
      headers: { 'x-api-key': CENSORED, Accept: 'json' },
      request: { headers: { Authorization: CENSORED } },
    });
  });

  it("censors a Redis error's command arguments (AUTH's password), the error serialized as pino does", () => {
    const { log, lines } = capture();
    const error = Object.assign(new Error('WRONGPASS invalid username-password pair'), {
      command: { name: 'auth', args: ['default', 'redis-pass'] },
    });
    log.error({ err: error }, 'redis failed');
    log.error(
      { err: { lastNodeError: { command: { name: 'auth', args: ['redis-pass-2'] } }, message: 'cluster' } },
      'cluster failed',
    );
    expect(JSON.stringify(lines)).not.toContain('redis-pass');
    expect(lines[0]?.err).toMatchObject({
      type: 'Error',
      message: 'WRONGPASS invalid username-password pair',
      command: { name: 'auth', args: CENSORED },
    });
    expect(String((lines[0]?.err as { stack?: string } | undefined)?.stack)).toContain('WRONGPASS');
  });

  it("censors a child logger's bindings", () => {
    const { log, lines } = capture();
    log.child({ runId: 'r1', password: 'p3' }).info('bound');
    expect(lines[0]).toMatchObject({ runId: 'r1', password: CENSORED });
  });

  it("censors the lines of a child given a log formatter of its own, which pino runs instead of the root's", () => {
    const { log, lines } = capture();
    const seen: unknown[] = [];
    const child = log.child(
      { runId: 'r2' },
      {
        formatters: {
          log: (fields: object) => {
            seen.push((fields as { err?: unknown }).err);
            return fields;
          },
        },
      },
    );
    child.child({ target: 't1' }).error({ token: 't9', err: new Error('boom') }, 'under a formatter');
    expect(lines[0]).toMatchObject({ runId: 'r2', target: 't1', token: CENSORED, err: { message: 'boom' } });
    // the child's formatter is given the error already serialized, as plain data
    expect(Object.getPrototypeOf(seen[0])).toBe(Object.prototype);
  });

  it('leaves a line without secrets as it is, and never changes the object logged', () => {
    const fields = { operation: 'pauseWorkspace', status: 200, requestId: 'req-1', durationMs: 21 };
    expect(censor(fields)).toBe(fields);
    const withSecret = { settings: { apiKey: 'k2' }, other: { a: 1 } };
    const censored = censor(withSecret);
    expect(censored).toEqual({ settings: { apiKey: CENSORED }, other: { a: 1 } });
    expect(withSecret.settings.apiKey).toBe('k2');
    expect(censored.other).toBe(withSecret.other);
  });
});
