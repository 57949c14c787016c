import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { cliLogger, redisRuntime } from '../runtime.js';
import { alignColumns } from '../table.js';

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
    .option('--json', 'print the summaries as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  REDIS_URL=redis://127.0.0.1:6379 nightshift history --job nightly-pause --limit 5',
    )
    .action(async (flags: { job?: string; limit: number; json?: boolean }) => {
      const runtime = redisRuntime(cliLogger('stderr'), 'history', { oneShot: true });
      try {
        const runs = await runtime.history.list({ job: flags.job, limit: flags.limit });
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
          return;
        }
        const rows = [['FINISHED', 'JOB', 'OUTCOME', 'TRIGGER', 'TARGETS', 'DURATION', 'RUN ID / REASON']];
        for (const run of runs) {
          const c = run.counts;
          rows.push([
            run.finishedAt ?? '-',
            run.job,
            run.outcome,
            run.trigger,
            c.total > 0 ? `${c.succeeded}✓ ${c.skipped}- ${c.failed}✗ /${c.total}` : '-',
            run.durationMs === undefined ? '-' : `${run.durationMs} ms`,
            run.reason ? `${run.runId} ${run.reason}` : run.runId,
          ]);
        }
        process.stdout.write(`${alignColumns(rows)}\n`);
      } finally {
        await runtime.close();
      }
    });
}
