import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/exit.js';
import { buildProgram } from '../../../src/cli/program.js';
import { seedState } from '../../../src/sim/index.js';

/** Parses `nightshift sim …`; every case here fails before anything listens. */
async function usageError(args: string[]): Promise<string> {
  const program = buildProgram();
  try {
    await program.parseAsync(['sim', ...args], { from: 'user' });
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('the flags were accepted');
}

describe('nightshift sim flag validation', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nightshift-sim-flags-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [['--fleet', '3by4'], '--fleet: fleet must look like WxS (e.g. 20x5), got "3by4"'],
    [['--fleet', '0x4'], '--fleet: fleet workgroups must be 1-2000, got 0'],
    [['--port', '70000'], '--port must be an integer from 0 to 65535, got "70000"'],
    [['--port', '80.5'], '--port must be an integer from 0 to 65535, got "80.5"'],
    [['--seed', 'abc'], '--seed must be an integer from 0 to 4294967295, got "abc"'],
    [['--transition-ms', '-5'], '--transition-ms must be an integer from 0 to 3600000, got "-5"'],
    [['--api-key', ''], '--api-key must not be empty'],
    [['--latency-ms', 'slow'], '--latency-ms must be a number, got "slow"'],
    [['--error-rate', '1.5'], '--error-rate: Too big: expected number to be <=1'],
    [['--throttle-rps', '0'], '--throttle-rps: Too small: expected number to be >0'],
    [['--fault-seed', '-1'], '--fault-seed: Too small: expected number to be >=0'],
    [['--org-users-shape', 'list'], '--org-users-shape must be one of auto, array, object, got "list"'],
    [
      ['--log-level', 'loud'],
      '--log-level must be one of fatal, error, warn, info, debug, trace, got "loud"',
    ],
  ])('refuses %j with a message naming the flag', async (args, message) => {
    expect(await usageError(args)).toBe(message);
  });

  it('lists the valid operations when --fault-operations names an unknown one', async () => {
    const message = await usageError(['--fault-operations', 'listWorkgroups,nukeEverything']);
    expect(message).toMatch(/^--fault-operations: /);
    expect(message).toContain('pauseWorkspace');
  });

  it('refuses --state with --fleet or --seed, since the file holds the fleet', async () => {
    expect(await usageError(['--state', 'x.json', '--fleet', '2x2'])).toContain(
      '--state and --fleet cannot be combined',
    );
    expect(await usageError(['--state', 'x.json', '--seed', '4'])).toContain(
      '--state and --seed cannot be combined',
    );
  });

  it('names the file and the JSON path of an invalid --state', async () => {
    const path = join(dir, 'bad.json');
    const state = seedState({ seed: 3, fleet: { workgroups: 1, workspacesPerWorkgroup: 1 } });
    await writeFile(path, JSON.stringify({ ...state, workspaces: [{ ...state.workspaces[0], status: 7 }] }));
    expect(await usageError(['--state', path])).toMatch(
      new RegExp(`^--state: ${path.replace(/[.]/g, '\\.')}: workspaces\\[0\\]\\.status: `),
    );
  });

  it('names a --state file that does not exist', async () => {
    const path = join(dir, 'missing.json');
    expect(await usageError(['--state', path])).toBe(`--state: ${path}: cannot read the state file (ENOENT)`);
  });
});
