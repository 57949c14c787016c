import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';

/** A command's whole --help text, the text added after the generated part included. */
function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({ writeOut: (chunk) => (text += chunk), writeErr: (chunk) => (text += chunk) });
  command.outputHelp();
  return text;
}

/** The example command lines under "Example:" or "Examples:", with `\` continuations joined. */
function examplesIn(help: string): string[] {
  const lines = help.split('\n');
  const start = lines.findIndex((line) => /^Examples?:$/.test(line));
  if (start < 0) return [];
  const examples: string[] = [];
  let pending = '';
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    const joined = `${pending} ${line.trim()}`.trim();
    if (joined.endsWith('\\')) pending = joined.slice(0, -1).trim();
    else {
      examples.push(joined);
      pending = '';
    }
  }
  return examples;
}

/**
 * The nightshift invocations in an example line (a pipeline may hold one), each as the command
 * it names and the --flags it passes, up to the next `|`, `>` or `&&`. Quoted text is left out,
 * so a jq filter or a --reason cannot pass for a flag.
 */
function invocations(example: string): { command: string; flags: string[] }[] {
  const unquoted = example.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, 'QUOTED');
  return [...unquoted.matchAll(/\bnightshift\s+([a-z-]+)([^|>&]*)/g)].map((match) => ({
    command: match[1] as string,
    flags: [...(match[2] ?? '').matchAll(/(?:^|\s)(--[a-z][a-z0-9-]*|-[a-zA-Z])(?=[\s=]|$)/g)].map(
      (flag) => flag[1] as string,
    ),
  }));
}

/** Every flag a command accepts, long and short, --help and -h included. */
function knownFlags(command: Command): Set<string> {
  return new Set([
    '--help',
    '-h',
    ...command.options.flatMap((option) => [option.long, option.short].filter((flag) => flag !== undefined)),
  ]);
}

const program = buildProgram();
const byName = new Map(program.commands.map((command) => [command.name(), command]));

describe('--help with examples', () => {
  it('covers every command of the program', () => {
    expect([...byName.keys()].sort()).toEqual(
      [
        'adopt',
        'approvals',
        'approve',
        'audit',
        'cancel',
        'console-token',
        'demo',
        'drift',
        'history',
        'hold',
        'holds',
        'next',
        'plan',
        'reject',
        'release',
        'run',
        'savings',
        'schema',
        'scheduler',
        'sim',
        'start',
        'suspend',
        'unsuspend',
        'validate',
        'worker',
      ].sort(),
    );
  });

  it.each([...byName.keys()])(
    'nightshift %s --help shows examples of itself with real options only',
    (name) => {
      const command = byName.get(name) as Command;
      const help = helpOf(command);
      expect(help).toContain('Example');
      const examples = examplesIn(help);
      expect(examples.length, help).toBeGreaterThan(0);
      const calls = examples.flatMap(invocations);
      expect(
        calls.some((call) => call.command === name),
        `no example runs "nightshift ${name}"`,
      ).toBe(true);
      const known = knownFlags(command);
      for (const call of calls.filter((each) => each.command === name)) {
        expect(
          call.flags.filter((flag) => !known.has(flag)),
          `unknown flags in an example of ${name}`,
        ).toEqual([]);
      }
    },
  );

  it('nightshift --help shows examples that name real commands and their real options', () => {
    const help = helpOf(program);
    const calls = examplesIn(help).flatMap(invocations);
    expect(calls.length).toBeGreaterThan(3);
    for (const call of calls) {
      const command = byName.get(call.command);
      expect(command, `"nightshift ${call.command}" is not a command`).toBeDefined();
      const known = knownFlags(command as Command);
      expect(call.flags.filter((flag) => !known.has(flag))).toEqual([]);
    }
    expect(help).toContain('NO_COLOR');
    expect(help).toMatch(/Exit codes: 0 .* 1 .* 2 .* 3 /);
  });

  it('the example checker catches a flag a command does not have', () => {
    const calls = invocations(
      `nightshift run p.yaml job -q --inline --dryrun -x --because "a --fake flag" | jq '.--x' > a-b.json`,
    );
    expect(calls).toEqual([{ command: 'run', flags: ['-q', '--inline', '--dryrun', '-x', '--because'] }]);
    const known = knownFlags(byName.get('run') as Command);
    expect(calls[0]?.flags.filter((flag) => !known.has(flag))).toEqual(['--dryrun', '-x', '--because']);
  });
});
