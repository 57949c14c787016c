// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests write the policy's own ${VAR} syntax
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { actionRegistry } from '../../../jobs/index.js';
import { loadPolicy, policyCommandDeps } from '../../../src/cli/policy-io.js';
import { buildProgram } from '../../../src/cli/program.js';
import { loadSettings } from '../../../src/config/index.js';
import type { SinkCommandAllowlist } from '../../../src/engine/index.js';

const directory = mkdtempSync(join(tmpdir(), 'nightshift-sink-commands-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(directory, name);
  writeFileSync(file, text);
  return file;
}

const policy = (sink: string) => `version: 1
jobs:
  rotate:
    schedule: "0 3 1 * *"
    action: rotate-db-password
    target: { workgroups: ["prod-*"] }
    with:
      username: app
      sink: ${sink}
`;

const SHELL = write('shell.yaml', policy('{ command: ["/bin/sh", "-c", "echo $NIGHTSHIFT_API_KEY > f"] }'));
const LISTED = write(
  'listed.yaml',
  policy('{ command: ["/usr/local/bin/store-secret", "--vault", "prod"] }'),
);
const FROM_VARIABLE = write('variable.yaml', policy('{ command: ["${SINK_PROGRAM}"] }'));
const FROM_SECRET = write(
  'secret.yaml',
  `secrets: [SINK_PROGRAM]\n${policy('{ command: ["${SINK_PROGRAM}"] }')}`,
);
const FILE_SINK = write('file.yaml', policy('{ file: /var/lib/nightshift/secrets.jsonl }'));
const OWN_VARIABLE = write(
  'own.yaml',
  policy('{ command: ["/usr/local/bin/store-secret"], env: [VAULT_ADDR, NIGHTSHIFT_API_KEY] }'),
);

/** `nightshift validate --json <file>` in-process on a machine allowing `sinkCommands`. */
async function validate(file: string, sinkCommands: SinkCommandAllowlist) {
  let stdout = '';
  let exitCode: number | undefined;
  const program = buildProgram({
    registry: actionRegistry,
    env: { SINK_PROGRAM: '/opt/secret-tool' },
    now: () => new Date('2026-03-27T12:00:00Z'),
    stdout: (text) => {
      stdout += text;
    },
    stderr: () => undefined,
    setExitCode: (code) => {
      exitCode = code;
    },
    sinkCommands,
  });
  await program.parseAsync(['node', 'nightshift', 'validate', '--json', file]);
  return { problems: JSON.parse(stdout) as { line: number; col: number; message: string }[], exitCode };
}

const ALLOWED = new Set(['/usr/local/bin/store-secret']);

describe('a policy naming a sink command NIGHTSHIFT_SINK_COMMANDS does not allow', () => {
  it('is refused by validate at the program, file:line:col, naming the variable', async () => {
    const { problems, exitCode } = await validate(SHELL, ALLOWED);
    expect(exitCode).toBe(2);
    expect(problems).toEqual([
      {
        file: SHELL,
        line: 9,
        col: 25,
        severity: 'error',
        message:
          'jobs.rotate.with.sink.command.0: the sink command\'s program "/bin/sh" may not run here: it is not one of the programs NIGHTSHIFT_SINK_COMMANDS allows (/usr/local/bin/store-secret), by absolute path as written',
      },
    ]);
  });

  it('shows a program that came from a variable as it is, and one from a secret variable as its ${NAME}, never its value', async () => {
    const { problems } = await validate(FROM_VARIABLE, new Set());
    expect(problems.map((problem) => problem.message)).toEqual([
      'jobs.rotate.with.sink.command.0: the sink command\'s program "/opt/secret-tool" may not run here: no sink command may run here (NIGHTSHIFT_SINK_COMMANDS=none)',
    ]);
    const secret = await validate(FROM_SECRET, new Set());
    expect(secret.problems.map((problem) => problem.message)).toEqual([
      'jobs.rotate.with.sink.command.0: the sink command\'s program "${SINK_PROGRAM}" may not run here: no sink command may run here (NIGHTSHIFT_SINK_COMMANDS=none)',
    ]);
  });

  it('is valid where the program is listed, where the variable is unset, and always for a file sink', async () => {
    expect((await validate(LISTED, ALLOWED)).problems).toEqual([]);
    expect((await validate(SHELL, undefined)).problems).toEqual([]);
    expect((await validate(FILE_SINK, new Set())).problems).toEqual([]);
  });

  it('is refused by the commands that load a policy to run it (run, plan, start, scheduler)', async () => {
    const deps = policyCommandDeps(
      loadSettings({ NIGHTSHIFT_SINK_COMMANDS: '/usr/local/bin/store-secret' }),
      {
        stderr: () => undefined,
      },
    );
    await expect(loadPolicy(SHELL, deps)).rejects.toMatchObject({
      kind: 'invalid-policy',
      problems: [expect.objectContaining({ line: 9, col: 25 })],
    });
    expect((await loadPolicy(LISTED, deps)).jobs).toHaveLength(1);
  });
});

describe("a sink's env: list", () => {
  it("refuses one of nightshift's own variables at its place in the file", async () => {
    const { problems } = await validate(OWN_VARIABLE, undefined);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 9, col: 75 });
    expect(problems[0]?.message).toContain(
      "NIGHTSHIFT_API_KEY is one of nightshift's own settings (REDIS_URL, NIGHTSHIFT_*: its credentials among them), never passed to a sink command",
    );
  });
});
