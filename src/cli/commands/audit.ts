import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import type { AuditEntry } from '../../store/index.js';
import { reportingUsageErrors } from '../exit.js';
import { parseSince, positiveInt } from '../option-parsers.js';
import { cliLogger, redisRuntime } from '../runtime.js';
import { alignColumns } from '../table.js';

interface AuditFlags {
  since?: number;
  limit: number;
  json?: boolean;
}

function detailsText(entry: AuditEntry): string {
  return Object.entries(entry.details ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
}

function auditTable(entries: readonly AuditEntry[]): string {
  if (entries.length === 0) return 'no changes recorded\n';
  return `${alignColumns([
    ['AT', 'WHO', 'ACTION', 'SUBJECT', 'WHERE', 'WHY', 'DETAILS'],
    ...entries.map((entry) => [
      entry.at,
      entry.who,
      entry.action,
      entry.subject,
      entry.where,
      entry.why ?? '',
      detailsText(entry),
    ]),
  ])}\n`;
}

export function registerAuditCommand(program: Command, settings: Settings): void {
  program
    .command('audit')
    .description(
      'who changed what, when, from where and why: holds, releases, suspensions, cancels, manual runs, adoptions',
    )
    .option(
      '--since <when>',
      'only changes since: a duration back from now (24h, 7d) or an ISO instant',
      parseSince,
    )
    .option('--limit <n>', 'most changes to show, newest first', positiveInt, 100)
    .option('--json', 'print the entries as a JSON array, newest first')
    .addHelpText(
      'after',
      [
        '',
        'Every change a person makes through the CLI or the console is appended to the audit trail in Redis, with',
        "who (--by, else user@host; the console: the signed-in principal), from where (the CLI's real user@host,",
        "or the console client's address), when (Redis's clock, so every host's changes are in one order) and why",
        '(--reason). It is kept as long as run history (NIGHTSHIFT_HISTORY_DAYS) and at most 10,000 entries.',
        '',
        'Examples:',
        '  nightshift audit --since 24h',
        '  nightshift audit --json --limit 1000',
      ].join('\n'),
    )
    .action(
      reportingUsageErrors(async (flags: AuditFlags) => {
        const runtime = redisRuntime(settings, cliLogger(settings, 'stderr'), 'cli', { oneShot: true });
        try {
          const entries = await runtime.audit.list({
            limit: flags.limit,
            ...(flags.since === undefined ? {} : { sinceMs: flags.since }),
          });
          process.stdout.write(flags.json ? `${JSON.stringify(entries, null, 2)}\n` : auditTable(entries));
        } finally {
          await runtime.close();
        }
      }),
    );
}
