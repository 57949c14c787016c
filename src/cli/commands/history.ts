import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { outcomeStyle, painterFor } from '../color.js';
import { cliLogger, redisRuntime } from '../runtime.js';
import { alignColumns, type Cell, styled } from '../table.js';

function positiveInt(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new InvalidArgumentError('expected a whole number of at least 1');
  return value;
}

export function registerHistoryCommand(program: Command): void {
  program
    .command('history')
    .description('recent runs with outcome, duration, target counts and request IDs (from Redis)')
    .option('--job <name>', 'only this job')
    .option('--limit <n>', 'most runs to show', positiveInt, 20)
    .option('--json', 'print the run summaries as a JSON array, newest first')
    .addHelpText(
      'after',
      [
        '',
        'TARGETS reads succeeded✓ skipped- failed✗ /total. Reads REDIS_URL (default redis://127.0.0.1:6379).',
        '',
        'Examples:',
        '  nightshift history',
        '  REDIS_URL=redis://127.0.0.1:6379 nightshift history --job nightly-pause --limit 5',
        '  nightshift history --json | jq -r \'.[] | select(.outcome != "succeeded") | .runId\'',
      ].join('\n'),
    )
    .action(async (flags: { job?: string; limit: number; json?: boolean }) => {
      const runtime = redisRuntime(cliLogger('stderr'), 'history', { oneShot: true });
      try {
        const runs = await runtime.history.list({ job: flags.job, limit: flags.limit });
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
          return;
        }
        const rows: Cell[][] = [
          ['FINISHED', 'JOB', 'OUTCOME', 'TRIGGER', 'TARGETS', 'DURATION', 'RUN ID / REASON'],
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
            run.reason ? `${run.runId} ${run.reason}` : run.runId,
          ]);
        }
        process.stdout.write(`${alignColumns(rows, painterFor(process.stdout))}\n`);
      } finally {
        await runtime.close();
      }
    });
}
