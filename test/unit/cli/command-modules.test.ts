import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_MODULES, programFor } from '../../../src/cli/command-modules.js';
import { settingsFrom } from '../../../src/cli/exit.js';
import { buildProgram } from '../../../src/cli/program.js';

const settings = settingsFrom({});
const whole = buildProgram({}, settings);

function helpOf(command: Command | undefined): string {
  let text = '';
  command?.configureOutput({ writeOut: (chunk) => (text += chunk), writeErr: (chunk) => (text += chunk) });
  command?.outputHelp();
  return text;
}

const argv = (...args: string[]) => ['node', 'nightshift', ...args];
const names = whole.commands.map((command) => command.name());

describe('nightshift <command> loads the module of that command alone', () => {
  it('knows the module of every command of the program', () => {
    expect(Object.keys(COMMAND_MODULES).sort()).toEqual([...names].sort());
  });

  it.each(names)('%s: registered by its module alone, it reads as in the whole program', async (name) => {
    const program = await programFor(argv(name, '--help'), settings);
    const alone = program.commands.find((command) => command.name() === name);
    const inWhole = whole.commands.find((command) => command.name() === name);
    expect(helpOf(alone)).toBe(helpOf(inWhole));
    expect(program.commands.length).toBeLessThan(whole.commands.length);
  });

  it('builds the whole program for its help, its version and a mistyped command', async () => {
    for (const args of [
      [],
      ['--help'],
      ['help', 'run'],
      ['-V'],
      ['schedulr', 'p.yaml'],
      ['--json', 'validate'],
    ]) {
      const program = await programFor(argv(...args), settings);
      expect(program.commands.map((command) => command.name())).toEqual(names);
      expect(helpOf(program)).toBe(helpOf(whole));
    }
  });
});
