import { buildProgram } from '../../src/cli/program.js';

/** Why `nightshift <argv>` would be refused before its action runs, or undefined when it parses. */
export function cliProblem(argv: readonly string[]): string | undefined {
  const [name, ...rest] = argv;
  const program = buildProgram();
  const names = program.commands.map((command) => command.name());
  const command = program.commands.find((candidate) => candidate.name() === name);
  if (!command) return `"${name}" is not a nightshift command (${names.join(', ')})`;
  command.configureOutput({ writeErr: () => {}, writeOut: () => {} });
  let parsed: { operands: string[]; unknown: string[] };
  try {
    parsed = command.parseOptions([...rest]);
  } catch (error) {
    return `${name}: ${(error as Error).message}`;
  }
  if (parsed.unknown.length > 0) {
    const known = command.options.map((option) => option.long).join(', ');
    return `${name} does not accept ${parsed.unknown.join(' ')} (it takes ${known || 'no options'})`;
  }
  const expected = command.registeredArguments;
  const required = expected.filter((argument) => argument.required).length;
  const most = expected.some((argument) => argument.variadic) ? Number.POSITIVE_INFINITY : expected.length;
  if (parsed.operands.length < required || parsed.operands.length > most) {
    return `${name} takes ${expected.map((argument) => argument.name()).join(' ') || 'no arguments'}, got "${parsed.operands.join(' ')}"`;
  }
  return undefined;
}
