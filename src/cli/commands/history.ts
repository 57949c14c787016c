import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import type { RunSummary } from '../../engine/index.js';
import { outcomeStyle, painterFor } from '../color.js';
import { reportingUsageErrors } from '../exit.js';
import { positiveInt } from '../option-parsers.js';
import { policyInForce, unknownName } from '../policy-in-force.js';
import { cliLogger, type RedisRuntime, redisRuntime } from '../runtime.js';
import { runReason } from '../summary-view.js';
import { alignColumns, type Cell, styled } from '../table.js';

/** How many request IDs a row shows; `--json` has every one. */
const SHOWN_REQUEST_IDS = 2;

/**
 * A run's request IDs, those of failed targets first (what support will ask for), then the
 * run's own (the fleet listing), then the rest; the first few, and how many more there are.
 */
export function requestIdsCell(run: RunSummary): string {
  const failed = run.targets.filter((target) => target.outcome === 'failed');
  const others = run.targets.filter((target) => target.outcome !== 'failed');
  const ids = [
    ...new Set([
      ...failed.flatMap((target) => target.requestIds),
      ...run.requestIds,
      ...others.flatMap((target) => target.requestIds),
    ]),
  ];
  if (ids.length === 0) return '-';
  const more = ids.length - SHOWN_REQUEST_IDS;
  return `${ids.slice(0, SHOWN_REQUEST_IDS).join(',')}${more > 0 ? ` +${more}` : ''}`;
}

/**
 * Why `--job <name>` found no runs, to print instead of an empty table: a job of the policy in
 * force that has no runs kept. A name in no policy with no runs is a UsageError (exit 2) naming the
 * closest job that has runs or is in the policy.
 */
async function explainNoRuns(runtime: RedisRuntime, job: string, file: string | undefined): Promise<string> {
  const policy = await policyInForce(runtime.policies, file, runtime.prefix);
  if (policy.known && policy.names.has(job))
    return `no runs of "${job}" kept: it is a job of ${policy.source} that has not run, or whose runs aged out of the history`;
  throw unknownName(job, policy, {
    lead: `no runs of "${job}" kept, and `,
    candidates: [...(await runtime.history.jobs()), ...(policy.known ? policy.names : [])],
  });
}

interface HistoryFlags {
  job?: string;
  policy?: string;
  limit: number;
  json?: boolean;
}

export function registerHistoryCommand(program: Command, settings: Settings): void {
  program
    .command('history')
    .description(
      'recent runs with outcome, duration, target counts, request IDs and why a run failed (from Redis)',
    )
    .option('--job <name>', 'only this job')
    .option(
      '--policy <file>',
      'with --job: tell a job from a typo by this policy file, not the one the schedulers run',
    )
    .option('--limit <n>', 'most runs to show', positiveInt, 20)
    .option(
      '--json',
      'print the run summaries as a JSON array, newest first; bad usage as { "error", "message", … }',
    )
    .addHelpText(
      'after',
      [
        '',
        'TARGETS reads succeeded✓ skipped- failed✗ /total. REQUEST IDS shows those of failed targets first,',
        'then the first others, and how many more (--json has them all). REASON says why a run was skipped,',
        'missed or failed: its own reason, or its first failed target and what went wrong there.',
        'With --job, a job of the policy in force without runs kept prints a line saying so (exit 0); a name',
        'in no policy with no runs exits 2 naming the closest job. Reads REDIS_URL (default redis://127.0.0.1:6379).',
        '',
        'Examples:',
        '  nightshift history',
        '  REDIS_URL=redis://127.0.0.1:6379 nightshift history --job nightly-pause --limit 5',
        '  nightshift history --json | jq -r \'.[] | select(.outcome != "succeeded") | .runId\'',
      ].join('\n'),
    )
    .action(
      reportingUsageErrors(async (flags: HistoryFlags) => {
        const runtime = redisRuntime(settings, cliLogger(settings, 'stderr'), 'history', { oneShot: true });
        try {
          const runs = await runtime.history.list({ job: flags.job, limit: flags.limit });
          const none =
            flags.job !== undefined && runs.length === 0
              ? await explainNoRuns(runtime, flags.job, flags.policy)
              : undefined;
          if (flags.json) {
            process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
            if (none) process.stderr.write(`${none}\n`);
            return;
          }
          if (none) {
            process.stdout.write(`${none}\n`);
            return;
          }
          const rows: Cell[][] = [
            [
              'FINISHED',
              'JOB',
              'OUTCOME',
              'TRIGGER',
              'TARGETS',
              'DURATION',
              'REQUEST IDS',
              'RUN ID',
              'REASON',
            ],
          ];
          for (const run of runs) {
            const c = run.counts;
            rows.push([
              run.finishedAt ?? '-',
              run.job,
              styled(run.outcome, outcomeStyle(run.outcome)),
              run.trigger,
              c.total > 0 ? `${c.succeeded}✓ ${c.skipped}- ${c.failed}✗ /${c.total}` : '-',
              run.durationMs === undefined ? '-' : `${run.durationMs} ms`,
              requestIdsCell(run),
              run.runId,
              runReason(run) ?? '',
            ]);
          }
          process.stdout.write(`${alignColumns(rows, painterFor(process.stdout, settings.terminal))}\n`);
        } finally {
          await runtime.close();
        }
      }),
    );
}
