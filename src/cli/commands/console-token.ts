import { type Command, Option } from 'commander';
import type { Settings } from '../../config/index.js';
import { newConsoleToken, ROLES, type Role } from '../../ops/index.js';
import { UsageError } from '../exit.js';

const NAME = /^[^\s<>"'&]{1,100}$/;

/** The tokens file's entry for a principal, as one YAML flow line (the file holds hashes only). */
export function tokensFileEntry(name: string, role: Role, hash: string): string {
  return `  - { name: ${JSON.stringify(name)}, role: ${role}, token: "${hash}" }`;
}

export function registerConsoleTokenCommand(program: Command, _settings: Settings): void {
  program
    .command('console-token <name>')
    .description(
      'make a console token for a person: the token once on stdout, the tokens file entry (its hash) on stderr',
    )
    .addOption(new Option('--role <role>', 'what they may do').choices(ROLES).makeOptionMandatory())
    .option('--json', 'print { "name", "role", "token", "entry" } on stdout instead')
    .addHelpText(
      'after',
      [
        '',
        'The token is 256 random bits, shown once: hand it to the person. The tokens file',
        '(NIGHTSHIFT_CONSOLE_TOKENS_FILE) keeps only its SHA-256, so the file reveals no token; the',
        'console reads the file when it starts. Roles include each other: approver ⊇ operator ⊇ viewer.',
        '  viewer    every page, no action',
        '  operator  hold and release, suspend and unsuspend, cancel runs',
        '  approver  what an operator may, and approvals (when they come)',
        '',
        'Example:',
        '  nightshift console-token ana --role operator',
        '  # tokens.yaml:',
        '  principals:',
        '    - { name: "ana", role: operator, token: "sha256:…" }',
      ].join('\n'),
    )
    .action((name: string, flags: { role: Role; json?: boolean }) => {
      if (!NAME.test(name))
        throw new UsageError(`"${name}": a name is one word without <>"'& (at most 100 characters)`);
      const { token, hash } = newConsoleToken();
      const entry = tokensFileEntry(name, flags.role, hash);
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({ name, role: flags.role, token, entry: { name, role: flags.role, token: hash } })}\n`,
        );
        return;
      }
      process.stdout.write(`${token}\n`);
      process.stderr.write(
        `the token above is shown once: hand it to ${name}. Add this entry under "principals:" in the tokens file (NIGHTSHIFT_CONSOLE_TOKENS_FILE) and restart the console:\n${entry}\n`,
      );
    });
}
