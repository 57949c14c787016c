import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import { recordChange } from '../../control/index.js';
import { STATUS, strandedSubject } from '../../engine/index.js';
import { cliOrigin } from '../actor.js';
import { reportingUsageErrors } from '../exit.js';
import { checkSuspendable, policyInForce, unknownName } from '../policy-in-force.js';
import { cliLogger, commandApiClient, redisRuntime } from '../runtime.js';
import { alignColumns } from '../table.js';

interface AdoptFlags {
  policy?: string;
  by?: string;
  reason?: string;
  dryRun?: boolean;
  json?: boolean;
}

/** One workspace `adopt` took back (or would, with --dry-run). */
export interface AdoptedRow {
  workspace: string;
  workgroupId: string;
  workspaceId: string;
  status: string;
  runId: string;
  /** The journal's record: `confirmed` (the API accepted the pause) or `intent` (its answer was lost). */
  pause: 'confirmed' | 'intent';
  since: string;
  requestId: string | null;
  adopted: boolean;
}

function report(owner: string, rows: readonly AdoptedRow[], dryRun: boolean): string {
  if (rows.length === 0)
    return `nothing stranded of ${owner}: every workspace its pause journal names is owned, running or gone\n`;
  const table = alignColumns([
    ['WORKSPACE', 'STATUS', 'PAUSE', 'SINCE', 'RUN', 'REQUEST'],
    ...rows.map((row) => [row.workspace, row.status, row.pause, row.since, row.runId, row.requestId ?? '-']),
  ]);
  const done = rows.filter((row) => row.adopted).length;
  const tail = dryRun
    ? `${rows.length} stranded workspace(s) would be ${owner}'s again (dry run: nothing written)`
    : `${done} workspace(s) are ${owner}'s again: its next uptime start (or resume) hands them back${done < rows.length ? `; ${rows.length - done} got a record meanwhile and were left as they are` : ''}`;
  return `${table}\n${tail}\n`;
}

export function registerAdoptCommand(program: Command, settings: Settings): void {
  program
    .command('adopt <owner>')
    .description(
      'make a window or pause job own again the stranded workspaces it demonstrably paused, so they are handed back',
    )
    .option(
      '--policy <file>',
      'check the name against this policy file instead of the one the schedulers run',
    )
    .option('--dry-run', 'list what would be adopted, and write nothing')
    .option('--by <name>', 'who adopts them, for the audit trail (default: user@host)')
    .option('--reason <text>', 'why, kept in the audit trail')
    .option('--json', 'print the rows as JSON')
    .addHelpText(
      'after',
      [
        '',
        'A stranded workspace is paused, owned by nobody, and in the pause journal: nightshift sent a pause for it',
        '(an intent written before the call, or a pause the API accepted) and never saw it running or resumed it',
        'since. Nothing would hand it back. adopt lists the fleet once and, for each such workspace <owner> paused,',
        'writes the ledger record again, confirmed; a workspace that got a record meanwhile is left alone.',
        '`nightshift drift <policy>` lists stranded workspaces (exit 3); so does every window reconciliation.',
        'Exit codes: 0 done (or nothing to do), 1 Redis or the API failed, 2 bad usage.',
        '',
        'Examples:',
        '  nightshift adopt dev-office-hours --dry-run',
        '  nightshift adopt nightly-pause --policy config/policy.yaml --json',
      ].join('\n'),
    )
    .action(
      reportingUsageErrors(async (owner: string, flags: AdoptFlags) => {
        const log = cliLogger(settings, 'stderr');
        const runtime = redisRuntime(settings, log, 'cli', { oneShot: true });
        const api = commandApiClient(settings, log);
        try {
          const policy = await policyInForce(runtime.policies, flags.policy, runtime.prefix);
          if (!policy.known) throw unknownName(owner, policy);
          checkSuspendable(owner, policy);
          const [{ result: workgroups }, owned, journal] = await Promise.all([
            api.listWorkgroups(),
            runtime.state.ledger.all(),
            runtime.state.ledger.journal(),
          ]);
          const rows: AdoptedRow[] = [];
          const now = new Date();
          for (const workgroup of workgroups)
            for (const ws of workgroup.workspaces ?? []) {
              const key = `${workgroup.workgroup_id}/${ws.workspace_id}`;
              const entry = journal.get(key);
              const paused = ws.status === STATUS.stopped || ws.status === STATUS.stopping;
              if (!entry || entry.owner !== owner || !paused || owned.has(key)) continue;
              rows.push({
                workspace: strandedSubject(entry),
                workgroupId: entry.workgroupId,
                workspaceId: entry.workspaceId,
                status: ws.status as string,
                runId: entry.runId,
                pause: entry.state,
                since: entry.pausedAt ?? entry.intendedAt,
                requestId: entry.requestId ?? null,
                adopted: flags.dryRun ? false : await runtime.state.ledger.adopt(entry, now),
              });
            }
          const adopted = rows.filter((r) => r.adopted);
          for (const row of adopted)
            log.info({ owner, workspaceId: row.workspaceId, runId: row.runId }, 'stranded workspace adopted');
          if (adopted.length > 0)
            await recordChange(runtime.audit, cliOrigin(flags.by, settings), 'adopt', owner, {
              why: flags.reason,
              details: { workspaces: adopted.length },
            });
          process.stdout.write(
            flags.json ? `${JSON.stringify(rows, null, 2)}\n` : report(owner, rows, flags.dryRun === true),
          );
        } finally {
          await runtime.close();
          await api.close();
        }
      }),
    );
}
