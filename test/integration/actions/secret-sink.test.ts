import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkSink,
  closeIfRejected,
  deliverSecret,
  generatePassword,
  markCurrent,
  type SecretSink,
  SecretSinkSchema,
  withoutSecret,
} from '../../../jobs/support/secret-sink.js';
import { ApiError } from '../../../src/api/index.js';
import { nodeActionIo, SecretSinkError } from '../../../src/engine/index.js';
import { jsonLines, type Recorded, useSinkFolder } from '../../helpers/secret-sink.js';

const folder = useSinkFolder('nightshift-sink-unit-');
const { dir } = folder;

const identity = { job: 'rotate', runId: 'run-1', workgroupId: 'wg-1', workspaceId: 'ws-1', username: 'app' };
const signal = new AbortController().signal;
/** The sinks as a worker reaches them: this machine's files and processes. */
const io = nodeActionIo({ environment: process.env }).secretSinks;

/** Whether process `pid` still runs (a zombie nobody reaped has stopped) after up to `ms`. */
async function stillRunningAfter(pid: number, ms: number): Promise<boolean> {
  const running = () => {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  for (const deadline = Date.now() + ms; running() && Date.now() < deadline; )
    await new Promise((resolve) => setTimeout(resolve, 50));
  return running();
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('generatePassword', () => {
  it('draws the requested length from letters and digits, with each of the three kinds present', () => {
    for (const length of [16, 32, 128]) {
      const password = generatePassword(length);
      expect(password).toHaveLength(length);
      expect(password).toMatch(/^[A-Za-z0-9]+$/);
      expect(password).toMatch(/[a-z]/);
      expect(password).toMatch(/[A-Z]/);
      expect(password).toMatch(/[0-9]/);
    }
  });

  it('never repeats itself over a thousand draws', () => {
    const drawn = new Set(Array.from({ length: 1000 }, () => generatePassword(16)));
    expect(drawn.size).toBe(1000);
  });
});

describe('SecretSinkSchema', () => {
  it('accepts an absolute file or a command, and refuses a relative file or an empty command', () => {
    expect(SecretSinkSchema.safeParse({ file: '/var/lib/nightshift/secrets.jsonl' }).success).toBe(true);
    expect(SecretSinkSchema.safeParse({ command: ['/usr/local/bin/store-secret', '--arg'] }).success).toBe(
      true,
    );
    expect(SecretSinkSchema.safeParse({ file: 'secrets.jsonl' }).success).toBe(false);
    expect(SecretSinkSchema.safeParse({ command: [] }).success).toBe(false);
    expect(SecretSinkSchema.safeParse({ file: '/a', command: ['/b'] }).success).toBe(false);
  });

  it('reads a command timeout as a duration of at most 10m', () => {
    expect(SecretSinkSchema.parse({ command: ['/b'], timeout: '5s' })).toEqual({
      command: ['/b'],
      timeout: 5000,
    });
    expect(SecretSinkSchema.safeParse({ command: ['/b'], timeout: '1h' }).success).toBe(false);
  });

  it("takes env: as names of variables to pass on, refusing nightshift's own (its credentials among them)", () => {
    expect(SecretSinkSchema.parse({ command: ['/b'], env: ['VAULT_ADDR', 'LANG'] })).toEqual({
      command: ['/b'],
      env: ['VAULT_ADDR', 'LANG'],
    });
    for (const name of ['NIGHTSHIFT_API_KEY', 'NIGHTSHIFT_POLICY_KEY', 'REDIS_URL']) {
      const parsed = SecretSinkSchema.safeParse({ command: ['/b'], env: [name] });
      expect(parsed.success, name).toBe(false);
      expect(JSON.stringify(parsed.error?.issues), name).toContain(
        `${name} is one of nightshift's own settings (REDIS_URL, NIGHTSHIFT_*: its credentials among them), never passed to a sink command`,
      );
    }
    expect(SecretSinkSchema.safeParse({ command: ['/b'], env: ['A=1'] }).success).toBe(false);
  });
});

describe('file sink', () => {
  it('creates the file with mode 0600 and appends one JSON line per record', async () => {
    const sink: SecretSink = { file: folder.fresh() };
    await deliverSecret(
      io,
      sink,
      identity,
      'id-1',
      { state: 'pending', password: 'Secret123secret' },
      signal,
    );
    await markCurrent(io, sink, identity, 'id-1', signal);
    expect(statSync(sink.file).mode & 0o777).toBe(0o600);
    const [pending, current] = jsonLines(sink.file);
    expect(pending).toMatchObject({
      ...identity,
      secretId: 'id-1',
      state: 'pending',
      password: 'Secret123secret',
    });
    expect(Date.parse(String(pending?.time))).not.toBeNaN();
    expect(current).toMatchObject({ ...identity, secretId: 'id-1', state: 'current' });
    expect(current).not.toHaveProperty('password');
  });

  it('refuses a file that group or others may read, naming the path and mode but not the secret', async () => {
    const path = folder.fresh();
    writeFileSync(path, '', { mode: 0o600 });
    chmodSync(path, 0o640);
    const error = await rejection(
      deliverSecret(
        io,
        { file: path },
        identity,
        'id-2',
        { state: 'pending', password: 'NeverShown42x' },
        signal,
      ),
    );
    expect(error).toBeInstanceOf(SecretSinkError);
    expect(error.message).toContain(path);
    expect(error.message).toContain('mode 0640');
    expect(error.message).not.toContain('NeverShown42x');
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('refuses a path that is not a regular file', async () => {
    const path = folder.fresh('a-directory', '');
    mkdirSync(path, { mode: 0o700 });
    const error = await rejection(
      deliverSecret(io, { file: path }, identity, 'id-3', { state: 'pending', password: 'x' }, signal),
    );
    expect(error.message).toMatch(/not a regular file|EISDIR/);
  });

  it('names the path and the error code when the directory does not exist', async () => {
    const path = join(dir, 'missing', 'secrets.jsonl');
    const error = await rejection(
      deliverSecret(io, { file: path }, identity, 'id-4', { state: 'pending', password: 'x' }, signal),
    );
    expect(error.message).toBe(`secret sink ${path}: cannot write (ENOENT)`);
  });

  it('refuses a symbolic link, to a private file or to none, and writes nothing through it', async () => {
    const target = folder.fresh('target');
    writeFileSync(target, '', { mode: 0o600 });
    const link = folder.fresh('link');
    symlinkSync(target, link);
    const dangling = folder.fresh('dangling');
    const nowhere = join(dir, 'would-be-created.jsonl');
    symlinkSync(nowhere, dangling);
    for (const path of [link, dangling]) {
      const error = await rejection(
        deliverSecret(
          io,
          { file: path },
          identity,
          'id-14',
          { state: 'pending', password: 'NoLink42abc' },
          signal,
        ),
      );
      expect(error.message).toBe(`secret sink ${path}: refused: it is a symbolic link; name the file itself`);
      await expect(checkSink(io, { file: path })).rejects.toThrow('is a symbolic link');
    }
    expect(readFileSync(target, 'utf8')).toBe('');
    expect(existsSync(nowhere)).toBe(false);
  });

  it('refuses a directory group or others may write to, sticky or not, naming it and its mode', async () => {
    for (const mode of [0o770, 0o1777]) {
      const shared = join(dir, `shared-${mode.toString(8)}`);
      mkdirSync(shared);
      chmodSync(shared, mode);
      const path = join(shared, 'secrets.jsonl');
      const error = await rejection(
        deliverSecret(
          io,
          { file: path },
          identity,
          'id-15',
          { state: 'pending', password: 'NoShare42abc' },
          signal,
        ),
      );
      expect(error).toBeInstanceOf(SecretSinkError);
      expect(error.message).toBe(
        `secret sink ${path}: refused: its directory ${shared} has mode ${mode.toString(8).padStart(4, '0')}, so group or others may create, replace or remove files in it; use a directory only this user can write to (chmod go-w ${shared})`,
      );
      expect(existsSync(path)).toBe(false);
      await expect(checkSink(io, { file: path })).rejects.toThrow(`its directory ${shared} has mode`);
    }
  });

  it('checkSink (dry run) finds the same problems without creating the file', async () => {
    const open = folder.fresh();
    writeFileSync(open, '', { mode: 0o600 });
    chmodSync(open, 0o644);
    await expect(checkSink(io, { file: open })).rejects.toThrow('mode 0644');
    await expect(checkSink(io, { file: join(dir, 'missing', 'x.jsonl') })).rejects.toThrow('is not usable');
    const absent = folder.fresh();
    await checkSink(io, { file: absent });
    expect(() => statSync(absent)).toThrow();
  });
});

describe('command sink', () => {
  it('gives the command the record on stdin and its identity in NIGHTSHIFT_SECRET_* variables, never the password', async () => {
    const { command, out } = folder.recorder();
    await deliverSecret(
      io,
      { command },
      identity,
      'id-5',
      { state: 'pending', password: 'ViaStdin123abc' },
      signal,
    );
    const [got] = jsonLines<Recorded>(out);
    expect(JSON.parse(String(got?.stdin))).toMatchObject({
      ...identity,
      state: 'pending',
      password: 'ViaStdin123abc',
    });
    expect(got?.env).toEqual({
      NIGHTSHIFT_SECRET_ID: 'id-5',
      NIGHTSHIFT_SECRET_STATE: 'pending',
      NIGHTSHIFT_SECRET_JOB: 'rotate',
      NIGHTSHIFT_SECRET_RUN_ID: 'run-1',
      NIGHTSHIFT_SECRET_WORKGROUP_ID: 'wg-1',
      NIGHTSHIFT_SECRET_WORKSPACE_ID: 'ws-1',
      NIGHTSHIFT_SECRET_USERNAME: 'app',
    });
  });

  it('runs the command without a shell: an argument with shell syntax arrives as written', async () => {
    const out = folder.fresh('argv', '.json');
    const script = `require('node:fs').writeFileSync(process.argv[1], JSON.stringify(process.argv.slice(2)))`;
    await deliverSecret(
      io,
      { command: [process.execPath, '-e', script, out, '$(touch /tmp/x); *'] },
      identity,
      'id-6',
      { state: 'current' },
      signal,
    );
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(['$(touch /tmp/x); *']);
  });

  it('gives the command PATH, HOME, its NIGHTSHIFT_SECRET_* values and the variables its env: names, none of the worker’s credentials', async () => {
    const out = folder.fresh('env', '.json');
    const script = `require('node:fs').writeFileSync(process.argv[1], JSON.stringify(process.env))`;
    const port = nodeActionIo({
      environment: {
        PATH: '/usr/bin:/bin',
        HOME: '/home/worker',
        SINK_BASE: 'from-settings',
        UNLISTED: 'not passed',
        NIGHTSHIFT_API_KEY: 'api-key-value',
        NIGHTSHIFT_BEARER_TOKEN: 'bearer-value',
        NIGHTSHIFT_UI_TOKEN: 'ui-token-value',
        NIGHTSHIFT_POLICY_KEY: 'policy-key-value',
        REDIS_URL: 'redis://:password@redis:6379',
        OPS_WEBHOOK: 'https://hooks.example/secret-path',
      },
    }).secretSinks;
    await deliverSecret(
      port,
      { command: [process.execPath, '-e', script, out], env: ['SINK_BASE'] },
      identity,
      'id-6b',
      { state: 'current' },
      signal,
    );
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/worker',
      SINK_BASE: 'from-settings',
      NIGHTSHIFT_SECRET_ID: 'id-6b',
      NIGHTSHIFT_SECRET_STATE: 'current',
      NIGHTSHIFT_SECRET_JOB: 'rotate',
      NIGHTSHIFT_SECRET_RUN_ID: 'run-1',
      NIGHTSHIFT_SECRET_WORKGROUP_ID: 'wg-1',
      NIGHTSHIFT_SECRET_WORKSPACE_ID: 'ws-1',
      NIGHTSHIFT_SECRET_USERNAME: 'app',
    });
  });

  it('refuses, before starting it, a program NIGHTSHIFT_SINK_COMMANDS does not list (by absolute path as written), or any with none', async () => {
    const { command, out } = folder.recorder();
    const only = (programs: string[]) =>
      nodeActionIo({ environment: process.env, sinkCommands: new Set(programs) }).secretSinks;
    await deliverSecret(
      only([process.execPath]),
      { command },
      identity,
      'id-11',
      { state: 'current' },
      signal,
    );
    expect(jsonLines(out)).toHaveLength(1);
    for (const [port, why] of [
      [
        only(['/usr/local/bin/store-secret']),
        'it is not one of the programs NIGHTSHIFT_SINK_COMMANDS allows (/usr/local/bin/store-secret)',
      ],
      [only([]), 'no sink command may run here (NIGHTSHIFT_SINK_COMMANDS=none)'],
    ] as const) {
      const error = await rejection(
        deliverSecret(
          port,
          { command },
          identity,
          'id-12',
          { state: 'pending', password: 'NotRun42abc' },
          signal,
        ),
      );
      expect(error).toBeInstanceOf(SecretSinkError);
      expect(error.message).toContain(`secret sink command ${process.execPath}: refused: ${why}`);
      expect(error.message).not.toContain('NotRun42abc');
    }
    const dotted = `${dirname(process.execPath)}/../${basename(dirname(process.execPath))}/${basename(process.execPath)}`;
    const error = await rejection(
      deliverSecret(
        only([process.execPath]),
        { command: [dotted, ...command.slice(1)] },
        identity,
        'id-13',
        { state: 'current' },
        signal,
      ),
    );
    expect(error.message).toContain('refused');
    expect(jsonLines(out)).toHaveLength(1);
  });

  it('fails on a non-zero exit, naming the program but not the secret', async () => {
    const error = await rejection(
      deliverSecret(
        io,
        {
          command: [
            process.execPath,
            '-e',
            'process.stdin.resume(); process.stdin.on("end", () => process.exit(3))',
          ],
        },
        identity,
        'id-7',
        { state: 'pending', password: 'NotInErrors99x' },
        signal,
      ),
    );
    expect(error).toBeInstanceOf(SecretSinkError);
    expect(error.message).toBe(`secret sink command ${process.execPath}: exited with code 3`);
  });

  it('kills a command that outlives its timeout and fails', async () => {
    const started = Date.now();
    const error = await rejection(
      deliverSecret(
        io,
        { command: [process.execPath, '-e', 'setTimeout(() => {}, 20000)'], timeout: 1000 },
        identity,
        'id-8',
        { state: 'current' },
        signal,
      ),
    );
    expect(error.message).toBe(`secret sink command ${process.execPath}: no exit within 1000 ms; killed`);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('kills what a command started along with it when it outlives its timeout: no process left behind', async () => {
    const pidFile = join(dir, 'grandchild.pid');
    const script = [
      `const child = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { stdio: 'ignore' });`,
      `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));`,
      'setTimeout(() => {}, 20000);',
    ].join('\n');
    const error = await rejection(
      deliverSecret(
        io,
        { command: [process.execPath, '-e', script], timeout: 1000 },
        identity,
        'id-14',
        { state: 'current' },
        signal,
      ),
    );
    expect(error.message).toBe(`secret sink command ${process.execPath}: no exit within 1000 ms; killed`);
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    expect(await stillRunningAfter(grandchild, 3000)).toBe(false);
  });

  it('fails when the program cannot be started', async () => {
    const error = await rejection(
      deliverSecret(
        io,
        { command: [join(dir, 'no-such-program')] },
        identity,
        'id-9',
        { state: 'current' },
        signal,
      ),
    );
    expect(error.message).toBe(
      `secret sink command ${join(dir, 'no-such-program')}: could not start (ENOENT)`,
    );
  });

  it('says the password is set but unconfirmed when marking it current fails', async () => {
    const error = await rejection(
      markCurrent(io, { command: [process.execPath, '-e', 'process.exit(1)'] }, identity, 'id-10', signal),
    );
    expect(error.message).toContain('the password of "app" was set, and is the one in pending record id-10');
    expect(error.message).toContain('exited with code 1');
  });
});

describe('withoutSecret', () => {
  const fields = {
    operation: 'updateDbUserPassword',
    method: 'PUT',
    path: '/controller/v4/v2/workgroups/wg-1/workspaces/ws-1/dbuser',
    status: 400,
    type: 'Bad-Request',
    requestId: 'req-1',
  };

  it('replaces a password the server quoted in its reason and details, keeping what the error says', () => {
    const quoting = new ApiError({
      ...fields,
      details: [
        { FieldName: 'password', Reason: 'password "Hunter2Hunter2" is too weak', Type: 'Bad-Request' },
      ],
      reason: 'password "Hunter2Hunter2" is too weak',
    });
    const scrubbed = withoutSecret(quoting, 'Hunter2Hunter2') as ApiError;
    expect(JSON.stringify(scrubbed.toJSON())).not.toContain('Hunter2Hunter2');
    expect(scrubbed.message).toBe(
      'updateDbUserPassword PUT /controller/v4/v2/workgroups/wg-1/workspaces/ws-1/dbuser → 400 Bad-Request (RequestID req-1): password "[redacted]" is too weak',
    );
    expect(scrubbed).toMatchObject({
      status: 400,
      type: 'Bad-Request',
      requestId: 'req-1',
      retryable: false,
    });
    expect(scrubbed.details[0]?.Reason).toBe('password "[redacted]" is too weak');
  });

  it('hands back any other error as it is', () => {
    const plain = new ApiError({ ...fields, reason: 'password must be 8-128 characters' });
    expect(withoutSecret(plain, 'Hunter2Hunter2')).toBe(plain);
    const other = new Error('boom');
    expect(withoutSecret(other, 'boom')).toBe(other);
  });
});

describe('closeIfRejected', () => {
  const call = {
    operation: 'updateDbUserPassword',
    method: 'PUT',
    path: '/controller/v4/v2/workgroups/wg-1/workspaces/ws-1/dbuser',
    requestId: 'req-7',
  };

  it('leaves a pending record open after a failure that may have been applied (5xx, time-out)', async () => {
    const path = join(dir, 'maybe.jsonl');
    for (const error of [
      new ApiError({ ...call, status: 500, type: 'Internal-Error', reason: 'boom' }),
      new ApiError({ ...call, type: 'Timeout', reason: 'no answer within 3000 ms' }),
    ])
      expect(await closeIfRejected(io, { file: path }, identity, 'id-20', error, signal)).toBe(error);
    expect(existsSync(path)).toBe(false);
  });

  it("names a sink that could not take the closing record, keeping the API's status and type", async () => {
    const refused = new ApiError({ ...call, status: 404, type: 'Not-Found', reason: 'no such user' });
    const failing = { command: [process.execPath, '-e', 'process.exit(2)'] };
    const error = (await closeIfRejected(io, failing, identity, 'id-21', refused, signal)) as ApiError;
    expect(error).toMatchObject({ status: 404, type: 'Not-Found', requestId: 'req-7', retryable: false });
    expect(error.message).toMatch(
      /→ 404 Not-Found \(RequestID req-7\): no such user; its pending record id-21 could not be closed as rejected: secret sink command .* exited with code 2/,
    );
  });
});

describe('cancellation', () => {
  it('kills a running sink command when the run is aborted', async () => {
    const controller = new AbortController();
    const delivery = deliverSecret(
      io,
      { command: [process.execPath, '-e', 'setTimeout(() => {}, 20000)'] },
      identity,
      'id-11',
      { state: 'current' },
      controller.signal,
    );
    setTimeout(() => controller.abort(), 100);
    const error = await rejection(delivery);
    expect(error.message).toBe(`secret sink command ${process.execPath}: cancelled`);
  });
});
