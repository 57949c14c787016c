import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import { policyJsonSchema } from '../../policy/index.js';
import { type PolicyCommandDeps, policyCommandDeps } from '../policy-io.js';

/** The policy JSON Schema as `nightshift schema` prints it (and config/schema/policy.schema.json holds). */
export function policySchemaText(deps: Pick<PolicyCommandDeps, 'registry'>): string {
  return `${JSON.stringify(policyJsonSchema(deps.registry), null, 2)}\n`;
}

export function registerSchemaCommand(
  program: Command,
  settings: Settings,
  overrides: Partial<PolicyCommandDeps> = {},
): void {
  program
    .command('schema')
    .description("print the policy file's JSON Schema, for editors (yaml-language-server)")
    .addHelpText(
      'after',
      [
        '',
        'Then put "# yaml-language-server: $schema=./policy.schema.json" at the top of a policy file.',
        '',
        'Examples:',
        '  nightshift schema > policy.schema.json',
        "  nightshift schema | jq '.properties.jobs'",
      ].join('\n'),
    )
    .action(() => {
      const deps = policyCommandDeps(settings, overrides);
      deps.stdout(policySchemaText(deps));
    });
}
